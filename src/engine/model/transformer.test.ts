import { describe, expect, it } from "vitest";
import { loadTinyModel } from "../../testing/models.js";
import { encodeFloats } from "../checkpoint/dtype.js";
import { SeededRandom } from "../fixtures/random.js";
import type { F32Matrix } from "../kernels/ts/matrix.js";
import { Transformer } from "./transformer.js";
import type { LinearAdapter, LinearName } from "./types.js";
import type { ModelWeights } from "./weights.js";

const ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;
const PROMPT = [12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250];

function expectClose(actual: Float32Array, expected: Float32Array, tolerance = 1e-5): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  expect(worst).toBeLessThan(tolerance);
}

function rows(logits: Float32Array, vocab: number, from: number, to: number): Float32Array {
  return logits.subarray(from * vocab, to * vocab);
}

describe.each(ARCHITECTURES)("%s transformer", (architecture) => {
  const model = loadTinyModel(architecture);
  const transformer = model.transformer;
  const vocab = model.config.vocabSize;
  const full = transformer.logitsOf(PROMPT);

  it("returns [positions × vocab] finite logits", () => {
    expect(full).toHaveLength(PROMPT.length * vocab);
    expect(full.every(Number.isFinite)).toBe(true);
  });

  it("decodes incrementally with a KV cache to the same logits as the full forward", () => {
    const cache = transformer.createCache(2);
    const [prefill] = transformer.forward([{ cache, tokens: PROMPT.slice(0, 5) }]);
    expect(cache.length).toBe(5);
    expectClose(prefill!, rows(full, vocab, 4, 5));
    for (let t = 5; t < PROMPT.length; t++) {
      const [step] = transformer.forward([{ cache, tokens: [PROMPT[t]!] }]);
      expectClose(step!, rows(full, vocab, t, t + 1));
    }
    expect(cache.length).toBe(PROMPT.length);
  });

  it("prefills in chunks and returns every position when asked", () => {
    const cache = transformer.createCache();
    const [none] = transformer.forward([{ cache, tokens: PROMPT.slice(0, 4), logits: "none" }]);
    expect(none).toBeNull();
    const [rest] = transformer.forward([{ cache, tokens: PROMPT.slice(4), logits: "all" }]);
    expectClose(rest!, rows(full, vocab, 4, PROMPT.length));
  });

  it("runs a batch of sequences at different positions as if each ran alone", () => {
    const other = [5, 6, 7, 8, 9, 10, 11];
    const alone = transformer.logitsOf(other);
    const a = transformer.createCache();
    const b = transformer.createCache();
    transformer.forward([{ cache: a, tokens: PROMPT.slice(0, 9) }]);
    const [first, second, third] = transformer.forward([
      { cache: a, tokens: PROMPT.slice(9), logits: "all" },
      { cache: b, tokens: other.slice(0, 6) },
      { cache: transformer.createCache(), tokens: [PROMPT[0]!], logits: "all" },
    ]);
    expectClose(first!, rows(full, vocab, 9, PROMPT.length));
    expectClose(second!, rows(alone, vocab, 5, 6));
    expectClose(third!, rows(full, vocab, 0, 1));
    const [decoded] = transformer.forward([{ cache: b, tokens: other.slice(6) }]);
    expectClose(decoded!, rows(alone, vocab, 6, 7));
  });

  it("rewinds to an earlier position and forks a cached prefix", () => {
    const cache = transformer.createCache();
    transformer.forward([{ cache, tokens: [1, 2, 3, 4, 5, 6, 7, 8] }]);
    const [rewound] = transformer.forward([{ cache, tokens: PROMPT.slice(5), position: 5, logits: "all" }]);
    const expected = transformer.logitsOf([1, 2, 3, 4, 5, ...PROMPT.slice(5)]);
    expectClose(rewound!, rows(expected, vocab, 5, PROMPT.length));
    const fork = cache.fork(7);
    expect(fork.length).toBe(7);
    const [continued] = transformer.forward([{ cache: fork, tokens: [42] }]);
    const reference = transformer.logitsOf([1, 2, 3, 4, 5, ...PROMPT.slice(5, 7), 42]);
    expectClose(continued!, rows(reference, vocab, 7, 8));
    expect(cache.length).toBe(PROMPT.length);
  });
});

/** A rank-1 change W' = W + u vᵀ of one linear layer, applied as an adapter or merged into the weights. */
class RankOneAdapter implements LinearAdapter {
  calls = 0;
  constructor(
    readonly layer: number,
    readonly name: LinearName,
    readonly u: Float32Array,
    readonly v: Float32Array,
  ) {}

  apply(layer: number, name: LinearName, x: Float32Array, out: Float32Array, rowCount: number): void {
    if (layer !== this.layer || name !== this.name) return;
    this.calls++;
    for (let r = 0; r < rowCount; r++) {
      let projection = 0;
      for (let i = 0; i < this.v.length; i++) projection += x[r * this.v.length + i]! * this.v[i]!;
      for (let o = 0; o < this.u.length; o++) out[r * this.u.length + o] += this.u[o]! * projection;
    }
  }
}

describe("linear adapters", () => {
  const model = loadTinyModel("qwen2");
  const { transformer, config } = model;

  function merged(adapter: RankOneAdapter): Transformer {
    const weights: ModelWeights = { ...transformer.weights, layers: [...transformer.weights.layers] };
    const key = { q_proj: "q", k_proj: "k", v_proj: "v", o_proj: "o", gate_proj: "gate", up_proj: "up", down_proj: "down" } as const;
    const layer = { ...weights.layers[adapter.layer]! };
    const linear = layer[key[adapter.name]];
    const base = (linear.weight as F32Matrix).data;
    const changed = Float32Array.from(base, (value, i) => value + adapter.u[Math.floor(i / adapter.v.length)]! * adapter.v[i % adapter.v.length]!);
    layer[key[adapter.name]] = { ...linear, weight: transformer.kernels.createMatrix(linear.weight.rows, linear.weight.cols, "F32", encodeFloats("F32", changed)) };
    weights.layers[adapter.layer] = layer;
    return new Transformer(config, weights, transformer.kernels);
  }

  it("adds a per-sequence delta equal to merging it into the weights, leaving other sequences alone", () => {
    const random = new SeededRandom(5);
    for (const [layer, name, outDim, inDim] of [
      [0, "q_proj", config.numHeads * config.headDim, config.hiddenSize],
      [1, "down_proj", config.hiddenSize, config.intermediateSize],
    ] as const) {
      const adapter = new RankOneAdapter(layer, name, random.uniform(outDim, 0.5), random.uniform(inDim, 0.5));
      const expected = merged(adapter).logitsOf(PROMPT);
      const plain = transformer.logitsOf(PROMPT);
      const [adapted, untouched] = transformer.forward([
        { cache: transformer.createCache(), tokens: PROMPT, logits: "all", adapter },
        { cache: transformer.createCache(), tokens: PROMPT, logits: "all" },
      ]);
      expect(adapter.calls).toBe(1);
      expectClose(adapted!, expected);
      expectClose(untouched!, plain);
      let changed = 0;
      for (let i = 0; i < plain.length; i++) changed = Math.max(changed, Math.abs(plain[i]! - adapted![i]!));
      expect(changed).toBeGreaterThan(1e-3);
    }
  });
});

describe("forward input checks", () => {
  const { transformer, config } = loadTinyModel("llama");

  it("rejects bad batches before touching any cache", () => {
    const cache = transformer.createCache();
    transformer.forward([{ cache, tokens: [1, 2, 3] }]);
    const other = transformer.createCache();
    expect(() =>
      transformer.forward([
        { cache: other, tokens: [1], position: 0 },
        { cache, tokens: [config.vocabSize] },
      ]),
    ).toThrow(/token id 576 is outside the model's vocabulary \(576\)/);
    expect(() => transformer.forward([{ cache, tokens: [-1] }])).toThrow(RangeError);
    expect(() => transformer.forward([{ cache, tokens: [1], position: 4 }])).toThrow(/position 4 is not within the cache \(3 positions\)/);
    expect(() => transformer.forward([{ cache, tokens: [] }])).toThrow(/at least one new token/);
    expect(() =>
      transformer.forward([
        { cache, tokens: [1] },
        { cache, tokens: [2] },
      ]),
    ).toThrow(/share a KV cache/);
    expect(() => transformer.forward([])).toThrow(/at least one sequence/);
    expect(cache.length).toBe(3);
    expect(other.length).toBe(0);
  });

  it("stops at max_position_embeddings", () => {
    const small = loadTinyModel("qwen3", { maxPositionEmbeddings: 8 });
    const cache = small.transformer.createCache();
    small.transformer.forward([{ cache, tokens: [1, 2, 3, 4, 5, 6, 7, 8] }]);
    expect(() => small.transformer.forward([{ cache, tokens: [9] }])).toThrow(/exceed max_position_embeddings \(8\)/);
  });
});
