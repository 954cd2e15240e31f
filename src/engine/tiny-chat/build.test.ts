import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TsKernels } from "../kernels/ts/index.js";
import { loadModel } from "../model/load.js";
import { type BuildOptions, buildTinyChat } from "./build.js";
import { TASK_NAMES } from "./examples.js";
import { NAME_PROBES } from "./name-probe.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-tiny-chat-build-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The build pipeline at a size a test can afford: one narrow layer, a few steps, one example per task. */
const micro = (outDir: string, seed: number): BuildOptions => ({
  outDir,
  seed,
  shape: { hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxPositionEmbeddings: 1024 },
  bpeVocabSize: 400,
  schedule: { steps: 3, examplesPerStep: 12, peakLearningRate: 3e-3, warmupSteps: 1, finalLearningRateFraction: 0.1, maxSequenceTokens: 512 },
  evalExamplesPerTask: 1,
  dtype: "f16",
  threads: 2,
  log: () => undefined,
});

const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file));

describe("buildTinyChat", () => {
  it("writes a loadable checkpoint, evaluates every task, and gives the same bytes for the same seed", async () => {
    const [first, second, other] = ["a", "b", "c"].map((name) => path.join(root, name));
    const report = await buildTinyChat(micro(first!, 3));
    await buildTinyChat(micro(second!, 3));
    await buildTinyChat(micro(other!, 4));

    expect(fs.readdirSync(first!).sort()).toEqual(["config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]);
    const model = loadModel(first!, { kernels: new TsKernels() });
    expect(model.config).toMatchObject({ architecture: "qwen2", hiddenSize: 32, numLayers: 1, tieWordEmbeddings: true });
    expect(model.eosTokenIds).toContain(model.tokenizer.tokenId("<|im_end|>"));
    expect(report.trainExamples).toBe(36);
    expect(report.trainTokens).toBeGreaterThan(0);
    expect(Object.keys(report.heldOut).sort()).toEqual([...TASK_NAMES].sort());
    expect(Object.keys(report.names).sort()).toEqual([...NAME_PROBES].sort());
    expect(report.names.real_unseen.recall.total).toBe(1);
    expect(report.parameters).toBe(model.config.vocabSize * 32 + (32 + 3 * 32 * 32 + 2 * 16 + 2 * 16 + 32 + 3 * 32 * 64) + 32);

    for (const file of ["model.safetensors", "tokenizer.json", "config.json"]) expect(read(second!, file).equals(read(first!, file)), file).toBe(true);
    expect(read(other!, "model.safetensors").equals(read(first!, "model.safetensors"))).toBe(false);
  });
});
