import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../../testing/stores.js";
import type { Architecture } from "../checkpoint/model-config.js";
import { CheckpointTensors } from "../checkpoint/tensors.js";
import { type FixtureDType, makeTinyModel, type TinyModelOptions } from "../fixtures/tiny-model.js";
import { TsKernels } from "../kernels/ts/index.js";
import { loadModel } from "./load.js";
import { Transformer } from "./transformer.js";

/**
 * The forward pass against logits computed by Hugging Face transformers (scripts/reference/logits.py;
 * its header says how the values were made, `npm run reference:regenerate` remakes them). Each
 * fixture is regenerated here from the same make-tiny options; its weights digest must equal the
 * recorded one, so both sides ran the same model.
 */

interface ReferenceCase {
  name: string;
  makeTinyArgs: string[];
  weightsDigest: string;
  vocabSize: number;
  prompts: { tokens: number[]; firstPosition: number; logitsF32Base64: string }[];
}

const TOLERANCE = 1e-4;
const here = path.dirname(fileURLToPath(import.meta.url));
const reference = JSON.parse(fs.readFileSync(path.join(here, "testdata", "reference-logits.json"), "utf8")) as { cases: ReferenceCase[] };
const root = makeTempDir("flywheel-reference-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The make-tiny flags the reference cases use, as options. */
function optionsFromArgs(args: string[]): TinyModelOptions {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) flags.set(args[i]!, args[i + 1]!);
  const options: TinyModelOptions = { architecture: flags.get("--arch") as Architecture };
  for (const [flag, value] of flags) {
    if (flag === "--seed") options.seed = Number(value);
    else if (flag === "--dtype") options.dtype = value as FixtureDType;
    else if (flag !== "--arch") throw new Error(`the reference test does not know make-tiny flag ${flag}`);
  }
  return options;
}

function decodeLogits(base64: string): Float32Array {
  const bytes = Buffer.from(base64, "base64");
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

function maxDifference(actual: Float32Array, expected: Float32Array): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  return worst;
}

const made = new Map<string, string>();

/** The case's fixture directory, written once. */
function fixtureFor(testCase: ReferenceCase): string {
  let dir = made.get(testCase.name);
  if (!dir) {
    dir = path.join(root, testCase.name);
    makeTinyModel(dir, optionsFromArgs(testCase.makeTinyArgs));
    made.set(testCase.name, dir);
  }
  return dir;
}

function digestOf(dir: string): string {
  const tensors = CheckpointTensors.open(dir);
  try {
    return tensors.digest();
  } finally {
    tensors.close();
  }
}

describe("logits against transformers", () => {
  it("covers every architecture and a 16-bit dtype of each kind", () => {
    const names = reference.cases.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(["llama-f32", "qwen2-f32", "qwen3-f32", "llama-f16", "qwen2-bf16"]));
  });

  for (const testCase of reference.cases) {
    it(`${testCase.name} matches within ${TOLERANCE}`, () => {
      const dir = fixtureFor(testCase);
      expect(digestOf(dir), "the fixture generator changed: regenerate the references (npm run reference:regenerate)").toBe(testCase.weightsDigest);
      const model = loadModel(dir, { kernels: new TsKernels() });
      expect(model.config.vocabSize).toBe(testCase.vocabSize);
      for (const prompt of testCase.prompts) {
        const logits = model.transformer.logitsOf(prompt.tokens).subarray(prompt.firstPosition * testCase.vocabSize);
        expect(maxDifference(logits, decodeLogits(prompt.logitsF32Base64))).toBeLessThan(TOLERANCE);
      }
    });
  }

  it("loads a sharded checkpoint to the same weights and logits", () => {
    const testCase = reference.cases.find((c) => c.name === "qwen3-f32")!;
    const dir = path.join(root, "qwen3-sharded");
    makeTinyModel(dir, { ...optionsFromArgs(testCase.makeTinyArgs), shards: 3 });
    expect(fs.readdirSync(dir).filter((file) => file.endsWith(".safetensors"))).toHaveLength(3);
    expect(digestOf(dir)).toBe(testCase.weightsDigest);
    const model = loadModel(dir, { kernels: new TsKernels() });
    const prompt = testCase.prompts[0]!;
    expect(maxDifference(model.transformer.logitsOf(prompt.tokens), decodeLogits(prompt.logitsF32Base64))).toBeLessThan(TOLERANCE);
  });

  it("is sensitive enough to notice a missing RoPE scaling", () => {
    const testCase = reference.cases.find((c) => c.name === "llama-f32")!;
    const model = loadModel(fixtureFor(testCase), { kernels: new TsKernels() });
    const long = testCase.prompts.find((prompt) => prompt.tokens.length > 50)!;
    const unscaled = new Transformer({ ...model.config, ropeScaling: null }, model.transformer.weights, model.transformer.kernels);
    const logits = unscaled.logitsOf(long.tokens).subarray(long.firstPosition * testCase.vocabSize);
    expect(maxDifference(logits, decodeLogits(long.logitsF32Base64))).toBeGreaterThan(100 * TOLERANCE);
  });
});
