import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../../testing/stores.js";
import type { Architecture } from "../checkpoint/model-config.js";
import { CheckpointTensors } from "../checkpoint/tensors.js";
import { makeTinyModel } from "../fixtures/tiny-model.js";
import { loadNativeKernels } from "../kernels/native-loader.js";
import { TsKernels } from "../kernels/ts/index.js";
import type { Kernels } from "../kernels/types.js";
import { LoraAdapter, type LoraModule } from "../lora/adapter.js";
import { DEFAULT_LORA_CONFIG, linearShape } from "../lora/config.js";
import { loadModel } from "../model/load.js";
import type { LinearName } from "../model/types.js";
import { LoraTrainer } from "./lora-trainer.js";
import { sftLossInputs } from "./sft.js";
import { IGNORE, type SftRow } from "./sft-tokenize.js";
import { plainSequence } from "./transformer/sequence.js";

/**
 * The trainer's LoRA gradients of one SFT step (before clipping and AdamW) against Hugging Face
 * transformers + PEFT, as scripts/reference/lora_gradients.py computed them in float64 (see its
 * header). The adapter (PEFT's lora_A, seeded nonzero lora_B) is read from the same file, and each
 * fixture is regenerated from its make-tiny arguments with a digest check, so both sides start
 * from the same numbers.
 */

interface ReferenceModule {
  layer: number;
  name: LinearName;
  aF32Base64: string;
  bF32Base64: string;
  gradAF32Base64: string;
  gradBF32Base64: string;
}

interface ReferenceCase {
  name: string;
  makeTinyArgs: string[];
  weightsDigest: string;
  loss: number;
  modules: ReferenceModule[];
}

interface ReferenceFile {
  lora: { rank: number; alpha: number; targetModules: string[] };
  sequences: { tokens: number[]; promptLength: number }[];
  cases: ReferenceCase[];
}

/** Largest |Flywheel − PEFT| of a tensor, relative to the tensor's largest reference magnitude. */
const RELATIVE_TOLERANCE = 1e-4;
const here = path.dirname(fileURLToPath(import.meta.url));
const reference = JSON.parse(fs.readFileSync(path.join(here, "testdata", "reference-lora-gradients.json"), "utf8")) as ReferenceFile;
const root = makeTempDir("flywheel-lora-reference-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function floats(base64: string): Float32Array {
  const bytes = Buffer.from(base64, "base64");
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Only --arch and --seed: the reference cases use the fixture's default sizes. */
function fixtureDir(testCase: ReferenceCase): string {
  const dir = path.join(root, testCase.name);
  if (fs.existsSync(dir)) return dir;
  const args = testCase.makeTinyArgs;
  expect(args.length).toBe(4);
  expect([args[0], args[2]]).toEqual(["--arch", "--seed"]);
  makeTinyModel(dir, { architecture: args[1] as Architecture, seed: Number(args[3]) });
  const tensors = CheckpointTensors.open(dir);
  try {
    expect(tensors.digest(), "the fixture generator changed: regenerate the references (npm run reference:regenerate)").toBe(testCase.weightsDigest);
  } finally {
    tensors.close();
  }
  return dir;
}

function referenceAdapter(testCase: ReferenceCase, modelConfig: Parameters<typeof linearShape>[0], alpha = reference.lora.alpha): LoraAdapter {
  const config = { ...DEFAULT_LORA_CONFIG, rank: reference.lora.rank, alpha, targetModules: reference.lora.targetModules };
  const modules: LoraModule[] = testCase.modules.map(({ layer, name, aF32Base64, bF32Base64 }) => ({ layer, name, ...linearShape(modelConfig, name), a: floats(aF32Base64), b: floats(bF32Base64) }));
  return new LoraAdapter(config, modelConfig, modules);
}

/** The reference batch as the trainer's SFT sequences: completion tokens labelled, the prompt not. */
function referenceBatch() {
  const rows: SftRow[] = reference.sequences.map(({ tokens, promptLength }) => {
    const ids = Int32Array.from(tokens);
    return { tokens: ids, labels: ids.map((id, p) => (p >= promptLength ? id : IGNORE)), numTrainableTokens: tokens.length - promptLength };
  });
  const sequences = rows.map((row) => ({ sequence: plainSequence(row.tokens), ...sftLossInputs(row) }));
  return { sequences, numTrainableTokens: rows.reduce((sum, row) => sum + row.numTrainableTokens, 0) };
}

/** Worst relative difference over the adapter's tensors, and which tensor it was. */
function compareGradients(trainer: LoraTrainer, testCase: ReferenceCase): { worst: number; where: string } {
  const gradients = trainer.gradientTensors;
  const modules = trainer.adapter.modules();
  expect(modules).toHaveLength(testCase.modules.length);
  let worst = 0;
  let where = "";
  modules.forEach((module, i) => {
    const expected = testCase.modules.find((entry) => entry.layer === module.layer && entry.name === module.name)!;
    for (const [factor, actual, base64] of [
      ["A", gradients[2 * i]!, expected.gradAF32Base64],
      ["B", gradients[2 * i + 1]!, expected.gradBF32Base64],
    ] as const) {
      const wanted = floats(base64);
      expect(actual.length).toBe(wanted.length);
      let scale = 0;
      let difference = 0;
      for (let j = 0; j < wanted.length; j++) {
        scale = Math.max(scale, Math.abs(wanted[j]!));
        difference = Math.max(difference, Math.abs(actual[j]! - wanted[j]!));
      }
      const relative = difference / scale;
      if (!(relative <= worst)) [worst, where] = [relative, `layer ${module.layer} ${module.name} lora_${factor}`];
    }
  });
  return { worst, where };
}

/** The TypeScript reference always, the native kernels where the addon is built (CI requires it elsewhere). */
function backends(): [string, () => Kernels][] {
  const list: [string, () => Kernels][] = [["ts", () => new TsKernels()]];
  try {
    loadNativeKernels();
    list.push(["native", () => loadNativeKernels()]);
  } catch {
    // No native addon: the TypeScript backend is what trains.
  }
  return list;
}

describe("LoRA gradients against transformers + PEFT", () => {
  it("covers every architecture", () => {
    expect(reference.cases.map((c) => c.name)).toEqual(["llama", "qwen2", "qwen3"]);
    expect(reference.lora).toMatchObject({ rank: DEFAULT_LORA_CONFIG.rank, alpha: DEFAULT_LORA_CONFIG.alpha });
  });

  for (const [backend, kernels] of backends()) {
    for (const testCase of reference.cases) {
      it(`${testCase.name} on the ${backend} kernels: loss and every lora_A / lora_B gradient within ${RELATIVE_TOLERANCE} relative`, () => {
        const model = loadModel(fixtureDir(testCase), { kernels: kernels() });
        const trainer = new LoraTrainer(model.transformer, referenceAdapter(testCase, model.config));
        const { sequences, numTrainableTokens } = referenceBatch();
        const loss = trainer.computeSftGradients(sequences, numTrainableTokens);
        expect(Math.abs(loss - testCase.loss) / testCase.loss).toBeLessThan(1e-6);
        const { worst, where } = compareGradients(trainer, testCase);
        expect(worst, `worst at ${where}`).toBeLessThan(RELATIVE_TOLERANCE);
      });
    }
  }

  it("is sensitive enough to notice a wrong LoRA scale", () => {
    const testCase = reference.cases[0]!;
    const model = loadModel(fixtureDir(testCase), { kernels: new TsKernels() });
    const trainer = new LoraTrainer(model.transformer, referenceAdapter(testCase, model.config, reference.lora.alpha * 1.01));
    const { sequences, numTrainableTokens } = referenceBatch();
    trainer.computeSftGradients(sequences, numTrainableTokens);
    expect(compareGradients(trainer, testCase).worst).toBeGreaterThan(10 * RELATIVE_TOLERANCE);
  });
});
