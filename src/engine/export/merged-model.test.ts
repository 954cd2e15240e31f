import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { INDEX_FILE } from "../checkpoint/tensors.js";
import { TsKernels } from "../kernels/ts/index.js";
import { createLoraAdapter } from "../lora/init.js";
import { loadModel } from "../model/load.js";
import { randomizeAdapter } from "../../testing/lora.js";
import { loadTinyModel, tinyModel } from "../../testing/models.js";
import { makeTempDir } from "../../testing/stores.js";
import { addScaledProduct, writeMergedModel } from "./merged-model.js";

const root = makeTempDir("flywheel-merged-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("writeMergedModel", () => {
  it("adds scale · B·A to each weight", () => {
    // W 2×3, B 2×1, A 1×3, scale 2: W + 2·B·A.
    const weight = new Float32Array([1, 2, 3, 4, 5, 6]);
    addScaledProduct(weight, new Float32Array([1, -1]), new Float32Array([0.5, 0, 1]), 2, 3, 1, 2);
    expect([...weight]).toEqual([2, 2, 5, 3, 5, 4]);
  });

  it("answers like the engine with the adapter applied, also when sharded with an index, in f32", () => {
    for (const architecture of ["qwen2", "qwen3", "llama"] as const) {
      const base = loadTinyModel(architecture, { dtype: "bf16" });
      const adapter = randomizeAdapter(createLoraAdapter(base.config, { rank: 4, alpha: 8, targetModules: ["q_proj", "k_proj", "down_proj"], seed: 1 }), 2);
      const out = path.join(root, architecture);
      const summary = writeMergedModel(tinyModel(architecture, { dtype: "bf16" }).dir, adapter, out, { maxShardBytes: 64 * 1024 });
      expect(summary.shards).toBeGreaterThan(1);
      expect(summary.mergedLinears).toBe(3 * base.config.numLayers);
      expect(fs.existsSync(path.join(out, INDEX_FILE))).toBe(true);
      expect(fs.existsSync(path.join(out, "README.md"))).toBe(false);
      expect(JSON.parse(fs.readFileSync(path.join(out, "config.json"), "utf8")).torch_dtype).toBe("float32");

      const merged = loadModel(out, { kernels: new TsKernels() });
      const tokens = [3, 17, 42, 5, 9];
      const expected = base.transformer.forward([{ cache: base.transformer.createCache(tokens.length), tokens, logits: "all", adapter }])[0]!;
      const actual = merged.transformer.logitsOf(tokens);
      let worst = 0;
      for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
      expect(worst, architecture).toBeLessThan(1e-4);
      // The adapter mattered: the base model answers differently.
      const plain = base.transformer.logitsOf(tokens);
      expect(
        plain.some((value, i) => Math.abs(value - expected[i]!) > 1e-3),
        architecture,
      ).toBe(true);
    }
  });
});
