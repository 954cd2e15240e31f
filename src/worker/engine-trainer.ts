import { createHash } from "node:crypto";
import fs from "node:fs";
import type { AdapterFiles, TrainingJobSpec } from "../engine/train/job/types.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from "../engine/lora/files.js";
import { OPTIMIZER_STATE_FILE } from "../engine/train/optimizer-file.js";
import type { TrainerThreads } from "../engine/train/thread/trainer-threads.js";
import type { BlobStore } from "../store/blobs.js";
import type { ModelLoraConfig, Trainer, TrainerUpdate, TrainingRun } from "./trainer.js";

/**
 * The real trainer: each job runs in the trainer thread of its base model (`TrainerThreads`),
 * starting from the job's checkpoint files in the blob store, or from a fresh adapter seeded by
 * the model's id when it has none.
 */
export class EngineTrainer implements Trainer {
  constructor(private readonly threads: TrainerThreads) {}

  async *train(run: TrainingRun): AsyncIterable<TrainerUpdate> {
    if (!run.servedBaseModel) throw new Error(`the base model '${run.model.baseModel}' is not served by this worker (its directory was not found in the model directories)`);
    yield* this.threads.run(run.servedBaseModel.dir, jobSpec(run), run.signal);
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}

/**
 * The engine's view of a job: plain data that crosses into the trainer thread. The work passes as
 * the bytes it was encoded to; the rest really changes shape: checkpoints (blob digests at a step) become local file paths, the
 * model's id becomes its fresh adapter's seed, and its LoRA shape goes from PEFT's names (as stored
 * and as the API writes them) to the engine's. The blob store, the catalog entry and the signal stay
 * on this side.
 */
export function jobSpec(run: TrainingRun): TrainingJobSpec {
  const spec: TrainingJobSpec = {
    jobId: run.jobId,
    from: adapterFiles(run.from.files, run.blobs, `step ${run.from.step}`),
    newAdapter: { seed: adapterSeed(run.model.id), baseModelNameOrPath: run.model.baseModel, ...loraShape(run.model.lora) },
    // Encoded by the thread that decoded it; the trainer thread decodes it (the event loop never does).
    work: { kind: "encoded", bytes: run.work.encoded, rewardStdDevHistory: run.work.kind === "rl" ? run.work.rewardStdDevHistory : [] },
  };
  if (run.klReference) spec.klReference = { files: adapterFiles(run.klReference.files, run.blobs, `KL reference step ${run.klReference.step}`) };
  return spec;
}

/** The model's own LoRA shape in the engine's names; nothing for the default. */
export function loraShape(lora: ModelLoraConfig | null): Pick<TrainingJobSpec["newAdapter"], "rank" | "alpha" | "targetModules"> {
  return lora ? { rank: lora.r, alpha: lora.lora_alpha, targetModules: lora.target_modules } : {};
}

/** A checkpoint's files as paths into the blob store; null files are the base weights. */
function adapterFiles(files: Record<string, string> | null, blobs: BlobStore, what: string): AdapterFiles | null {
  if (files === null) return null;
  const path = (name: string) => {
    const digest = files[name];
    if (digest === undefined) throw new Error(`the checkpoint at ${what} has no ${name}, so it is not a PEFT adapter this trainer can continue from`);
    const file = blobs.localPath(digest);
    if (!fs.existsSync(file)) throw new Error(`the ${name} of the checkpoint at ${what} is missing from the blob store`);
    return file;
  };
  const adapter: AdapterFiles = { configFile: path(ADAPTER_CONFIG_FILE), weightsFile: path(ADAPTER_WEIGHTS_FILE) };
  if (files[OPTIMIZER_STATE_FILE] !== undefined) adapter.optimizerFile = path(OPTIMIZER_STATE_FILE);
  return adapter;
}

/** A model's fresh adapter is the same every time: seeded by its id. */
export function adapterSeed(modelId: string): number {
  return createHash("sha256").update(modelId).digest().readUInt32LE(0);
}
