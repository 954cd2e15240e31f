import { expect, it } from "vitest";
import { loadTinyModel, tinyModel } from "../../../testing/models.js";
import { describeNative } from "../../../testing/native.js";
import type { Architecture } from "../../checkpoint/model-config.js";
import type { FixtureDType } from "../../fixtures/tiny-model.js";
import { loadModel } from "../../model/load.js";
import { NativeKernels } from "./index.js";

/**
 * The same fixture checkpoint on the TypeScript reference and on the native kernels: logits agree to
 * within 1e-4 (relative to max(1, |logit|)) in every precision. The reference widens 16-bit weights
 * to f32 and sums in f64; the native kernels read them as stored and sum in f32, which accounts for the
 * differences seen (2e-6, 1e-5 with qwen3's q/k norms); the tolerance leaves room for longer sums.
 */
const TOLERANCE = 1e-4;

function worstError(actual: Float32Array, expected: Float32Array): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  return worst;
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

describeNative("native kernels run fixture models like the reference", (addon) => {
  const cases: [Architecture, FixtureDType][] = (["llama", "qwen2", "qwen3"] as const).flatMap((arch) => (["f32", "f16", "bf16"] as const).map((dtype): [Architecture, FixtureDType] => [arch, dtype]));

  it.each(cases)("%s in %s: prompt logits, then batched decode steps", (arch, dtype) => {
    const reference = loadTinyModel(arch, { dtype });
    const native = loadModel(tinyModel(arch, { dtype }).dir, { kernels: new NativeKernels(addon, { threads: 2 }) });
    const prompt = reference.tokenizer.encode("The quick brown fox jumps over the lazy dog, again and again.");
    expect(prompt.length).toBeGreaterThan(8);
    expect(worstError(native.transformer.logitsOf(prompt), reference.transformer.logitsOf(prompt))).toBeLessThan(TOLERANCE);

    // Two sequences decoding together, each feeding back its own greedy token.
    const caches = [reference, native].map((model) => [model.transformer.createCache(), model.transformer.createCache()]);
    let next = [prompt.slice(0, 5), prompt.slice(3)];
    for (let step = 0; step < 4; step++) {
      const [expected, actual] = [reference, native].map((model, m) => model.transformer.forward(next.map((tokens, s) => ({ cache: caches[m]![s]!, tokens }))));
      for (let s = 0; s < 2; s++) expect(worstError(actual![s]!, expected![s]!)).toBeLessThan(TOLERANCE);
      next = expected!.map((logits) => [argmax(logits!)]);
    }
  });
});
