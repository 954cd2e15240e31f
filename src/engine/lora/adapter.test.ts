import { describe, expect, it } from "vitest";
import { mergedTransformer, randomizeAdapter } from "../../testing/lora.js";
import { loadTinyModel } from "../../testing/models.js";
import { createLoraAdapter } from "./init.js";

const PROMPT = [12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250];

function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe.each(["llama", "qwen2", "qwen3"] as const)("LoRA adapter on %s", (architecture) => {
  const { transformer, config } = loadTinyModel(architecture);

  it("gives the logits of the merged weights W + scale·B·A", () => {
    const adapter = randomizeAdapter(createLoraAdapter(config, { seed: 1 }), 2);
    const [adapted] = transformer.forward([{ cache: transformer.createCache(), tokens: PROMPT, logits: "all", adapter }]);
    const merged = mergedTransformer(transformer, adapter).logitsOf(PROMPT);
    expect(maxDifference(adapted!, merged)).toBeLessThan(2e-5);
    expect(maxDifference(adapted!, transformer.logitsOf(PROMPT))).toBeGreaterThan(1e-2);
  });

  it("is the identity when fresh (B = 0)", () => {
    const adapter = createLoraAdapter(config, { seed: 3 });
    const [adapted] = transformer.forward([{ cache: transformer.createCache(), tokens: PROMPT, logits: "all", adapter }]);
    expect(maxDifference(adapted!, transformer.logitsOf(PROMPT))).toBe(0);
  });
});

describe("adapters in one batch", () => {
  const { transformer, config } = loadTinyModel("qwen2");

  it("apply per sequence: two adapters and none in one forward equal each run alone", () => {
    const first = randomizeAdapter(createLoraAdapter(config, { seed: 1 }), 10);
    const second = randomizeAdapter(createLoraAdapter(config, { seed: 2, rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj"] }), 11);
    const other = [5, 6, 7, 8, 9, 10, 11];
    const alone = (tokens: number[], adapter?: typeof first) => transformer.forward([{ cache: transformer.createCache(), tokens, logits: "all", adapter }])[0]!;
    const expected = [alone(PROMPT, first), alone(other, second), alone(PROMPT), alone(other, first)];
    const batch = transformer.forward([
      { cache: transformer.createCache(), tokens: PROMPT, logits: "all", adapter: first },
      { cache: transformer.createCache(), tokens: other, logits: "all", adapter: second },
      { cache: transformer.createCache(), tokens: PROMPT, logits: "all" },
      { cache: transformer.createCache(), tokens: other, logits: "all", adapter: first },
    ]);
    batch.forEach((logits, i) => expect(maxDifference(logits!, expected[i]!)).toBe(0));
    expect(maxDifference(expected[0]!, expected[2]!)).toBeGreaterThan(1e-2);
  });

  it("decodes with a KV cache to the logits of a full adapted forward", () => {
    const adapter = randomizeAdapter(createLoraAdapter(config, { seed: 4 }), 12);
    const full = transformer.forward([{ cache: transformer.createCache(), tokens: PROMPT, logits: "all", adapter }])[0]!;
    const cache = transformer.createCache();
    transformer.forward([{ cache, tokens: PROMPT.slice(0, 8), adapter }]);
    const vocab = config.vocabSize;
    for (let t = 8; t < PROMPT.length; t++) {
      const [step] = transformer.forward([{ cache, tokens: [PROMPT[t]!], adapter }]);
      expect(maxDifference(step!, full.subarray(t * vocab, (t + 1) * vocab))).toBeLessThan(1e-5);
    }
  });
});

describe("createLoraAdapter", () => {
  const { config } = loadTinyModel("qwen3");

  it("puts rank 8, alpha 16 factors on all seven linear layers of every layer, initialised as PEFT does", () => {
    const adapter = createLoraAdapter(config, { seed: 7 });
    expect(adapter.rank).toBe(8);
    expect(adapter.scale).toBe(2);
    expect(adapter.modules().map((m) => `${m.layer}.${m.name}`)).toEqual([0, 1].flatMap((layer) => ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"].map((name) => `${layer}.${name}`)));
    for (const module of adapter.modules()) {
      const bound = 1 / Math.sqrt(module.inDim);
      expect(module.a.every((value) => Math.abs(value) <= bound)).toBe(true);
      // Kaiming-uniform spread: the largest draw is near the bound, not a fraction of it.
      expect(Math.max(...module.a.map(Math.abs))).toBeGreaterThan(0.9 * bound);
      expect(module.b.every((value) => value === 0)).toBe(true);
    }
    expect(createLoraAdapter(config, { seed: 7 }).modules()[0]!.a).toEqual(adapter.modules()[0]!.a);
    expect(createLoraAdapter(config, { seed: 8 }).modules()[0]!.a).not.toEqual(adapter.modules()[0]!.a);
  });

  it("scales by alpha/√r with rsLoRA and honours target_modules and layers_to_transform", () => {
    const adapter = createLoraAdapter(config, { rank: 4, alpha: 8, useRslora: true, targetModules: ["self_attn.o_proj", "down_proj"], layersToTransform: [1] });
    expect(adapter.scale).toBe(4);
    expect(adapter.modules().map((m) => `${m.layer}.${m.name}`)).toEqual(["1.o_proj", "1.down_proj"]);
    const regex = createLoraAdapter(config, { targetModules: "model\\.layers\\.0\\..*(q_proj|k_proj)" });
    expect(regex.modules().map((m) => `${m.layer}.${m.name}`)).toEqual(["0.q_proj", "0.k_proj"]);
    expect(createLoraAdapter(config, { targetModules: "all-linear" }).modules()).toHaveLength(14);
  });

  it("refuses invalid settings", () => {
    expect(() => createLoraAdapter(config, { rank: 0 })).toThrow(/'r' must be a positive integer/);
    expect(() => createLoraAdapter(config, { alpha: -1 })).toThrow(/'lora_alpha' must be positive/);
  });
});
