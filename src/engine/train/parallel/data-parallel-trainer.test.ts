import { afterAll, describe, expect, it } from "vitest";
import { tinyModel } from "../../../testing/models.js";
import { TsKernels } from "../../kernels/ts/index.js";
import { loadModel } from "../../model/load.js";
import { packSftRows } from "../sft-packing.js";
import { IGNORE } from "../sft-tokenize.js";
import type { SftSequence } from "../sft-packing.js";
import { Trainer } from "../trainer.js";
import { modelParameters } from "../transformer/model-gradients.js";
import { DataParallelTrainer, splitByTokens } from "./data-parallel-trainer.js";

/** Five sequences of different lengths, each trained on its second half. */
function batch(seed: number): SftSequence[] {
  return [9, 14, 6, 11, 7].map((length, index) => {
    const tokens = Int32Array.from({ length }, (_, p) => (seed * 31 + index * 17 + p * 7) % 500 + 3);
    const labels = tokens.map((token, p) => (p >= length / 2 ? token : IGNORE));
    return packSftRows([{ tokens, labels, numTrainableTokens: 0 }], 0);
  });
}

describe("DataParallelTrainer", () => {
  const dir = tinyModel("qwen2").dir;
  const opened: DataParallelTrainer[] = [];
  afterAll(async () => Promise.all(opened.map((trainer) => trainer.close())));

  async function trainTwoSteps(replicas: number) {
    const trainer = await DataParallelTrainer.start(dir, replicas);
    opened.push(trainer);
    const steps = [await trainer.sftSequencesStep({ sequences: batch(1), learningRate: 2e-3 }), await trainer.sftSequencesStep({ sequences: batch(2), learningRate: 1e-3 })];
    return { steps, parameters: await trainer.parameters() };
  }

  it("takes the steps a one-thread Trainer takes, and the same bits every run", async () => {
    const model = loadModel(dir, { kernels: new TsKernels() });
    const single = new Trainer(model.transformer, "full");
    const expected = [single.sftSequencesStep({ sequences: batch(1), learningRate: 2e-3 }), single.sftSequencesStep({ sequences: batch(2), learningRate: 1e-3 })];
    const expectedParameters = modelParameters(model.transformer);

    const [first, second] = [await trainTwoSteps(2), await trainTwoSteps(2)];
    first.steps.forEach((step, i) => {
      expect(step.loss).toBeCloseTo(expected[i]!.loss, 5);
      expect(step.gradNorm).toBeCloseTo(expected[i]!.gradNorm, 4);
      expect(step.numTrainableTokens).toBe(expected[i]!.numTrainableTokens);
    });
    let worst = 0;
    first.parameters.forEach(({ name, values }, t) => {
      expect(name).toBe(expectedParameters[t]!.name);
      values.forEach((value, j) => (worst = Math.max(worst, Math.abs(value - expectedParameters[t]!.values[j]!))));
    });
    expect(worst).toBeLessThan(1e-5);
    // The weights did move: the steps are not empty.
    const initial = modelParameters(loadModel(dir, { kernels: new TsKernels() }).transformer);
    expect(first.parameters.some(({ values }, t) => values.some((value, j) => value !== initial[t]!.values[j]))).toBe(true);
    expect(second.parameters.every(({ values }, t) => values.every((value, j) => value === first.parameters[t]!.values[j]))).toBe(true);
  });

  it("refuses a replica count that is not a positive integer, and a directory without a model", async () => {
    await expect(DataParallelTrainer.start(dir, 0)).rejects.toThrow(/positive integer/);
    await expect(DataParallelTrainer.start("/nonexistent-model-dir", 1)).rejects.toThrow(/a training replica failed/);
  });
});

describe("splitByTokens", () => {
  it("balances tokens, longest first, deterministically", () => {
    const sequences = [5, 9, 2, 9, 4].map((length, id) => ({ id, sequence: { length } }));
    const shares = splitByTokens(sequences, 2);
    // 9 and 9 open the shares; 5 goes to the first (tie), then 4 and 2 to the lighter second: 14 and 15 tokens.
    expect(shares.map((share) => share.map(({ id }) => id))).toEqual([[1, 0], [3, 4, 2]]);
    expect(splitByTokens(sequences, 3).map((share) => share.length)).toEqual([2, 1, 2]);
    expect(splitByTokens([], 2)).toEqual([[], []]);
  });
});
