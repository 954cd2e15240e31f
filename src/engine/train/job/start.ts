import { loadLoraAdapter } from "../../lora/files.js";
import { createLoraAdapter, type NewLoraOptions } from "../../lora/init.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import type { LoadedModel } from "../../model/load.js";
import type { AdamWState } from "../adamw.js";
import { LoraTrainer } from "../lora-trainer.js";
import { readOptimizerState } from "../optimizer-file.js";
import type { AdapterFiles, TrainingJobSpec } from "./types.js";

/**
 * The trainer a job starts with: the checkpoint's adapter and optimizer moments, or a fresh
 * adapter (the identity) with fresh moments. Moments that do not fit the adapter (another rank or
 * targets, e.g. an adapter made elsewhere) are dropped rather than failing the job.
 */
export function startTrainer(model: LoadedModel, spec: Pick<TrainingJobSpec, "from" | "newAdapter">): LoraTrainer {
  const adapter = spec.from ? loadLoraAdapter(spec.from, model) : createLoraAdapter(model.config, freshAdapterOptions(spec.newAdapter));
  const state = spec.from?.optimizerFile ? readOptimizerState(spec.from.optimizerFile) : undefined;
  return new LoraTrainer(model.transformer, adapter, state && fits(state, adapter) ? { optimizerState: state } : {});
}

/** The options of a fresh adapter; unset shape fields keep the defaults. */
function freshAdapterOptions(fresh: TrainingJobSpec["newAdapter"]): NewLoraOptions {
  const options: NewLoraOptions = { seed: fresh.seed, baseModelNameOrPath: fresh.baseModelNameOrPath };
  if (fresh.rank !== undefined) options.rank = fresh.rank;
  if (fresh.alpha !== undefined) options.alpha = fresh.alpha;
  if (fresh.targetModules !== undefined) options.targetModules = fresh.targetModules;
  return options;
}

/** The KL reference weights: another checkpoint's adapter, or null for the base model. */
export function referenceAdapter(model: LoadedModel, files: AdapterFiles | null): LoraAdapter | null {
  return files ? loadLoraAdapter(files, model) : null;
}

function fits(state: AdamWState, adapter: LoraAdapter): boolean {
  const sizes = adapter.parameters().map((tensor) => tensor.length);
  return state.expAvg.length === sizes.length && sizes.every((size, i) => state.expAvg[i]!.length === size && state.expAvgSq[i]!.length === size);
}
