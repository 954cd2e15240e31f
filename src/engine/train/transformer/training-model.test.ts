import { describe, expect, it } from "vitest";
import { randomizeAdapter } from "../../../testing/lora.js";
import { loadTinyModel } from "../../../testing/models.js";
import { packedTestRow } from "../../../testing/packed-rows.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import { createLoraAdapter } from "../../lora/init.js";
import { logSumExp } from "../../sampling/fast-math.js";
import { rlLossInputs } from "../loss-inputs.js";
import { plainSequence } from "./sequence.js";
import { TrainingModel } from "./training-model.js";

const ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;
const TOKENS = [12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250, 77, 5];

/** What inference reports for each next token: logits[p][tokens[p+1]] − logsumexp(logits[p]), and the entropy. */
function inferenceScores(model: ReturnType<typeof loadTinyModel>, tokens: number[], adapter?: LoraAdapter) {
  const { transformer, config } = model;
  const [logits] = transformer.forward([{ cache: transformer.createCache(), tokens, logits: "all", adapter }]);
  const vocab = config.vocabSize;
  const logprobs: number[] = [];
  const entropies: number[] = [];
  for (let p = 0; p + 1 < tokens.length; p++) {
    const row = logits!.subarray(p * vocab, (p + 1) * vocab);
    const normalizer = logSumExp(row);
    logprobs.push(row[tokens[p + 1]!]! - normalizer);
    let entropy = 0;
    for (let j = 0; j < vocab; j++) entropy -= Math.exp(row[j]! - normalizer) * (row[j]! - normalizer);
    entropies.push(entropy);
  }
  return { logprobs, entropies };
}

function allNextTokens(tokens: number[]) {
  const targets = new Int32Array(tokens.length);
  const mask = new Uint8Array(tokens.length);
  for (let p = 0; p + 1 < tokens.length; p++) [targets[p], mask[p]] = [tokens[p + 1]!, 1];
  return { targets, mask };
}

function maxDifference(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  return worst;
}

describe.each(ARCHITECTURES)("trainer forward on %s", (architecture) => {
  const model = loadTinyModel(architecture);
  const trainer = new TrainingModel(model.transformer);

  it.each([false, true])("gives the inference forward's logprobs and entropies (adapter: %s)", (withAdapter) => {
    const adapter = withAdapter ? randomizeAdapter(createLoraAdapter(model.config, { seed: 1 }), 2) : undefined;
    const expected = inferenceScores(model, TOKENS, adapter);
    const scores = trainer.forward(plainSequence(TOKENS), adapter ?? null, allNextTokens(TOKENS));
    expect(maxDifference(scores.logprobs.subarray(0, TOKENS.length - 1), expected.logprobs)).toBeLessThan(1e-5);
    expect(maxDifference(scores.entropies.subarray(0, TOKENS.length - 1), expected.entropies)).toBeLessThan(1e-5);
    expect(scores.logprobs[TOKENS.length - 1]).toBeNaN();
  });

  it("scores each completion of a packed row as if it ran alone after its prompt", () => {
    const adapter = randomizeAdapter(createLoraAdapter(model.config, { seed: 3 }), 4);
    const prompt = TOKENS.slice(0, 5);
    const completions = [
      [400, 401, 402, 403],
      [410, 411, 412],
      [420, 421, 422, 423, 424],
    ];
    const row = packedTestRow(
      prompt,
      completions.map((tokens) => ({ tokens, advantage: 1 })),
      24,
    );
    expect(row.length).toBe(4 + completions.reduce((sum, completion) => sum + 1 + completion.length, 0));
    const inputs = rlLossInputs(row);
    const scores = trainer.forward(row, adapter, inputs);
    // Each completion's segment is the prompt's last token then the completion: position `at`
    // (that prompt token) predicts the completion's first token.
    let at = prompt.length - 1;
    for (const completion of completions) {
      const alone = inferenceScores(model, [...prompt, ...completion], adapter).logprobs.slice(prompt.length - 1);
      expect([...inputs.mask.subarray(at, at + completion.length)]).toEqual(completion.map(() => 1));
      expect(maxDifference(scores.logprobs.subarray(at, at + completion.length), alone)).toBeLessThan(1e-5);
      at += completion.length + 1;
    }
  });

  it.each([false, true])("scores some positions without a backward bit for bit as the forward kept for one (adapter: %s)", (withAdapter) => {
    // Scoring alone runs the last layer past attention at the scored positions only.
    const adapter = withAdapter ? randomizeAdapter(createLoraAdapter(model.config, { seed: 5 }), 2) : null;
    const request = allNextTokens(TOKENS);
    for (const p of [0, 1, 2, 6, 7, 11]) request.mask[p] = 0;
    const kept = trainer.forward(plainSequence(TOKENS), adapter, request, true);
    const [logprobs, entropies] = [kept.logprobs.slice(), kept.entropies.slice()];
    const scored = trainer.forward(plainSequence(TOKENS), adapter, request);
    expect([...scored.logprobs]).toEqual([...logprobs]);
    expect([...scored.entropies]).toEqual([...entropies]);
    expect(scored.logprobs.filter((value) => !Number.isNaN(value))).toHaveLength(TOKENS.length - 1 - 6);
  });

  it("refuses sequences outside the model", () => {
    const request = allNextTokens([1, 2, 3]);
    expect(() => trainer.forward(plainSequence([1, model.config.vocabSize, 3]), null, request)).toThrow(/token id 576 at position 1 is outside/);
    expect(() => trainer.forward(plainSequence([1, 2, 3]), null, { targets: Int32Array.of(9999, 0, 0), mask: Uint8Array.of(1, 0, 0) })).toThrow(/target token 9999 at position 0/);
    expect(() => trainer.forward(plainSequence([]), null, { targets: new Int32Array(0), mask: new Uint8Array(0) })).toThrow(/at least one token/);
    expect(() => trainer.backward(new Float64Array(3), null as never)).toThrow(/backward needs a forward/);
  });
});
