import { describe, expect, it } from "vitest";
import { tinyModel } from "../../testing/models.js";
import { TsKernels } from "../kernels/ts/index.js";
import { createLoraAdapter } from "../lora/init.js";
import { loadModel } from "../model/load.js";
import { packSftBatch, packSftRows } from "./sft-packing.js";
import { sftLossInputs } from "./sft.js";
import { IGNORE, type SftRow } from "./sft-tokenize.js";
import { Trainer } from "./trainer.js";
import { plainSequence } from "./transformer/sequence.js";

/** A fresh copy of the qwen2 fixture's weights (full-parameter training changes them). */
const freshModel = () => loadModel(tinyModel("qwen2").dir, { kernels: new TsKernels() });

/** Rows sharing a 5-token prefix, trained on their last tokens. */
function rowsWithPrefix(): SftRow[] {
  const prefix = [12, 300, 45, 99, 7];
  return [
    [560, 201, 18, 64, 500],
    [33, 70, 81],
    [560, 9, 2, 250, 251, 252],
  ].map((rest) => {
    const tokens = Int32Array.from([...prefix, ...rest]);
    const labels = tokens.map((token, p) => (p >= prefix.length + 1 ? token : IGNORE));
    return { tokens, labels, numTrainableTokens: rest.length - 1 };
  });
}

describe("Trainer in full-parameter mode", () => {
  it("trains every weight: the loss falls and inference sees the new weights", () => {
    const model = freshModel();
    const trainer = new Trainer(model.transformer, "full");
    expect(trainer.adapter).toBeNull();
    expect(trainer.parameterCount).toBeGreaterThan(model.config.vocabSize * model.config.hiddenSize);
    const rows = rowsWithPrefix();
    const before = model.transformer.logitsOf(rows[0]!.tokens).slice();
    const losses: number[] = [];
    for (let step = 0; step < 12; step++) losses.push(trainer.sftStep({ rows, learningRate: 3e-3 }).loss);
    expect(losses[11]!).toBeLessThan(losses[0]! / 3);
    const after = model.transformer.logitsOf(rows[0]!.tokens);
    expect(after.some((value, i) => value !== before[i])).toBe(true);
    // The trainer's ℓ after the steps are what the inference forward computes.
    const scores = trainer.sequenceLogprobs(rows[0]!.tokens);
    const vocab = model.config.vocabSize;
    for (let p = 0; p + 1 < rows[0]!.tokens.length; p++) {
      const row = after.subarray(p * vocab, (p + 1) * vocab);
      const max = Math.max(...row);
      const normalizer = max + Math.log(row.reduce((sum, value) => sum + Math.exp(value - max), 0));
      expect(scores.logprobs[p]).toBeCloseTo(row[rows[0]!.tokens[p + 1]!]! - normalizer, 4);
    }
  });

  it("takes the same step from rows packed after their shared prefix, or concatenated by sftStep, as from the rows apart", () => {
    const rows = rowsWithPrefix();
    const apart = rows.map((row) => ({ sequence: plainSequence(row.tokens), ...sftLossInputs(row) }));
    const [packedModel, concatenatedModel, plainModel] = [freshModel(), freshModel(), freshModel()];
    const packed = new Trainer(packedModel.transformer, "full").sftSequencesStep({ sequences: [packSftRows(rows, 5)], learningRate: 1e-3 });
    const concatenated = new Trainer(concatenatedModel.transformer, "full").sftStep({ rows, learningRate: 1e-3 });
    const plain = new Trainer(plainModel.transformer, "full").sftSequencesStep({ sequences: apart, learningRate: 1e-3 });
    expect(packed.numTrainableTokens).toBe(plain.numTrainableTokens);
    expect(packed.numTokens).toBe(5 + 5 + 3 + 6);
    expect(concatenated).toMatchObject({ numTrajectories: 3, numTokens: 10 + 8 + 11, numTrainableTokens: plain.numTrainableTokens });
    expect(concatenated.loss).toBeCloseTo(plain.loss, 6);
    expect(concatenated.gradNorm).toBeCloseTo(plain.gradNorm, 5);
    expect(packed.loss).toBeCloseTo(plain.loss, 5);
    expect(packed.gradNorm).toBeCloseTo(plain.gradNorm, 4);
    const next = Int32Array.from([12, 300, 45, 99, 7, 33, 70]);
    const [a, b, c] = [packedModel.transformer.logitsOf(next), plainModel.transformer.logitsOf(next), concatenatedModel.transformer.logitsOf(next)];
    a.forEach((value, i) => expect(value).toBeCloseTo(b[i]!, 4));
    c.forEach((value, i) => expect(value).toBeCloseTo(b[i]!, 5));
  });
});

describe("packSftBatch", () => {
  it("concatenates consecutive rows up to the token cap, each row attending to itself at its own positions", () => {
    const rows = rowsWithPrefix(); // 10, 8 and 11 tokens
    const sequences = packSftBatch(rows, 18);
    expect(sequences.map(({ sequence }) => sequence.length)).toEqual([18, 11]);
    expect([...sequences[0]!.sequence.inputPos]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect([...sequences[0]!.sequence.groupIds]).toEqual([...new Array(10).fill(1), ...new Array(8).fill(2)]);
    expect(sequences.map(({ mask }) => mask.reduce((sum, bit) => sum + bit, 0))).toEqual([rows[0]!.numTrainableTokens + rows[1]!.numTrainableTokens, rows[2]!.numTrainableTokens]);
    // A row longer than the cap is a sequence of its own.
    expect(packSftBatch(rows, 4).map(({ sequence }) => sequence.length)).toEqual([10, 8, 11]);
  });
});

describe("Trainer.score", () => {
  it("scores packed rows as each row alone: the same logprob and entropy at each trained position, bit for bit", () => {
    const trainer = new Trainer(freshModel().transformer, "full");
    const rows = rowsWithPrefix();
    const [packed] = packSftBatch(rows, 64);
    const { logprobs, entropies } = trainer.score(packed!);
    let at = 0;
    for (const row of rows) {
      const alone = trainer.sequenceLogprobs(row.tokens);
      for (let p = 0; p + 1 < row.tokens.length; p++) {
        if (packed!.mask[at + p]) {
          expect(logprobs[at + p]).toBe(alone.logprobs[p]);
          expect(entropies[at + p]).toBe(alone.entropies[p]);
        }
      }
      at += row.tokens.length;
    }
    expect(packed!.mask.reduce((sum, bit) => sum + bit, 0)).toBe(rows.reduce((sum, row) => sum + row.numTrainableTokens, 0));
  });
});

describe("packSftRows", () => {
  it("lays out the prefix once and each row after it at its own positions", () => {
    const rows = rowsWithPrefix();
    const { sequence, targets, mask } = packSftRows(rows, 5);
    expect(sequence.length).toBe(19);
    expect([...sequence.inputPos]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 5, 6, 7, 5, 6, 7, 8, 9, 10]);
    expect([...sequence.groupIds]).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3]);
    expect([...sequence.parentIds]).toEqual(new Array(19).fill(0));
    // Row 1 (33, 70, 81) trains 70 and 81: predicted at its positions of 33 and 70.
    expect([...mask.subarray(10, 13)]).toEqual([1, 1, 0]);
    expect([...targets.subarray(10, 12)]).toEqual([70, 81]);
    expect(mask.reduce((sum, bit) => sum + bit, 0)).toBe(rows.reduce((sum, row) => sum + row.numTrainableTokens, 0));
  });

  it("refuses rows that do not share the prefix or train where packing cannot", () => {
    const rows = rowsWithPrefix();
    const lastOnly = rows.map((row) => ({ ...row, labels: row.labels.map((label, p) => (p === row.tokens.length - 1 ? label : IGNORE)) }));
    expect(() => packSftRows(lastOnly, 6)).toThrow(/row 1 does not start with the shared 6-token prefix/);
    const trainsFirst = { ...rows[0]!, labels: rows[0]!.tokens.slice() };
    expect(() => packSftRows([trainsFirst], 5)).toThrow(/inside the shared prefix/);
    const labels = rows[0]!.labels.slice();
    labels[5] = rows[0]!.tokens[5]!;
    expect(() => packSftRows([{ ...rows[0]!, labels }], 5)).toThrow(/first token after the shared prefix/);
    expect(() => packSftRows([], 0)).toThrow(/at least one row/);
  });
});

describe("Trainers of one model", () => {
  it("share its training buffers and still step exactly as a trainer alone", () => {
    const model = freshModel();
    const rows = rowsWithPrefix();
    const adapterOf = (seed: number) => {
      const adapter = createLoraAdapter(model.config, { seed });
      // PEFT starts B at zero; a nonzero B gives both factors gradients from the first step.
      for (const tensor of adapter.parameters()) for (let i = 0; i < tensor.length; i++) tensor[i] ||= 0.01 * Math.sin(seed + i);
      return adapter;
    };
    const alone = new Trainer(model.transformer, adapterOf(1));
    const losses = [0, 1, 2].map(() => alone.sftStep({ rows, learningRate: 1e-3 }).loss);

    // The same steps with another trainer's steps (other rows, other lengths) between them.
    const [first, second] = [new Trainer(model.transformer, adapterOf(1)), new Trainer(model.transformer, adapterOf(2))];
    const interleaved: number[] = [];
    for (let step = 0; step < 3; step++) {
      interleaved.push(first.sftStep({ rows, learningRate: 1e-3 }).loss);
      second.sftStep({ rows: rows.slice(step), learningRate: 1e-3 });
    }
    expect(interleaved).toEqual(losses);
    expect(first.adapter!.parameters()).toEqual(alone.adapter!.parameters());
  });
});
