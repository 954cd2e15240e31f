import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadModelFiles } from "../model/load.js";
import { IGNORE } from "../train/sft-tokenize.js";
import { modelTemplateDeps } from "../train/job/template-deps.js";
import { generateExamples } from "./dataset.js";
import { initialTensors, tinyChatConfig, writeModelDir } from "./model-init.js";
import { renderExample, tinyChatTokenizerFiles } from "./tokenizer.js";
import { learningRateAt, type TrainSchedule } from "./train-loop.js";
import { packStep, tokenizeExamples } from "./training-data.js";

const SHAPE = { hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxPositionEmbeddings: 1024 };
const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-tiny-chat-data-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const examples = generateExamples({ seed: 5, count: 300, split: "train" });
const tokenizer = tinyChatTokenizerFiles(examples, 700, SHAPE.maxPositionEmbeddings);
const config = tinyChatConfig(SHAPE, tokenizer);
writeModelDir(root, { config, tokenizer, tensors: initialTensors(SHAPE, config.vocab_size as number, 1) });
const files = loadModelFiles(root);

describe("tiny-chat tokenizer", () => {
  it("spells numbers digit by digit and round-trips every rendered conversation", () => {
    const ids = files.tokenizer.encode("What is 47 + 38?", { addSpecialTokens: false });
    expect(ids.map((id) => files.tokenizer.decode([id]))).toContain("4");
    expect(ids.map((id) => files.tokenizer.decode([id]))).not.toContain("47");
    for (const example of examples.slice(0, 50)) {
      const text = renderExample(example);
      expect(files.tokenizer.decode(files.tokenizer.encode(text, { addSpecialTokens: false }), { skipSpecialTokens: false })).toBe(text);
    }
    for (const token of ["<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"]) expect(files.tokenizer.tokenId(token)).toBeDefined();
    expect(config.vocab_size).toBe(Math.ceil(tokenizer.size / 64) * 64);
  });
});

describe("tokenizeExamples and packStep", () => {
  const rows = tokenizeExamples(examples, modelTemplateDeps(files));

  it("trains the assistant turns only and finds the system turn every row starts with", () => {
    const start = files.tokenizer.tokenId("<|im_start|>")!;
    rows.forEach((row, i) => {
      const hasSystem = examples[i]!.messages[0]!.role === "system" || examples[i]!.tools !== undefined;
      expect(row.prefixLength > 0).toBe(hasSystem);
      if (hasSystem) expect(row.tokens[row.prefixLength]).toBe(start);
      const trained = Array.from(
        row.labels.filter((label) => label !== IGNORE),
        (id) => files.tokenizer.decode([id], { skipSpecialTokens: false }),
      ).join("");
      const last = examples[i]!.messages[examples[i]!.messages.length - 1]!;
      if (typeof last.content === "string" && last.content) expect(trained).toContain(last.content);
      expect(trained).not.toContain("<|im_start|>user");
    });
  });

  it("shares each system turn within a packed sequence, keeps every trained token and respects the length", () => {
    const batch = rows.slice(0, 64);
    const sequences = packStep(batch, 512);
    const trained = (mask: Uint8Array) => mask.reduce((sum, bit) => sum + bit, 0);
    expect(sequences.reduce((sum, { mask }) => sum + trained(mask), 0)).toBe(batch.reduce((sum, row) => sum + row.numTrainableTokens, 0));
    const total = sequences.reduce((sum, { sequence }) => sum + sequence.length, 0);
    expect(total).toBeLessThan(batch.reduce((sum, row) => sum + row.tokens.length, 0));
    for (const { sequence } of sequences) {
      const longestRow = Math.max(...batch.map((row) => row.tokens.length));
      expect(sequence.length).toBeLessThanOrEqual(Math.max(512, longestRow));
    }
    expect(packStep(batch, 512)).toEqual(sequences);
  });
});

describe("learningRateAt", () => {
  const schedule: TrainSchedule = { steps: 100, examplesPerStep: 1, peakLearningRate: 1e-3, warmupSteps: 10, finalLearningRateFraction: 0.1, maxSequenceTokens: 64 };

  it("warms up linearly, peaks, and decays by a cosine to the floor at the last step", () => {
    expect(learningRateAt(0, schedule)).toBeCloseTo(1e-4, 12);
    expect(learningRateAt(9, schedule)).toBeCloseTo(1e-3, 12);
    expect(learningRateAt(10, schedule)).toBeCloseTo(1e-3, 12);
    expect(learningRateAt(99, schedule)).toBeCloseTo(1e-4, 12);
    // Halfway through the decay (step 54.5) the rate is halfway between peak and floor.
    expect((learningRateAt(54, schedule) + learningRateAt(55, schedule)) / 2).toBeCloseTo(5.5e-4, 6);
    for (let step = 11; step < 100; step++) expect(learningRateAt(step, schedule)).toBeLessThanOrEqual(learningRateAt(step - 1, schedule));
  });
});
