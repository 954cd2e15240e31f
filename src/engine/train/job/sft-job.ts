import type { LoadedModel } from "../../model/load.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { sftBatchPlan } from "../sft-config.js";
import { sftExampleFromJson, tokenizeSftExample } from "../sft-tokenize.js";
import { buildSftBatches } from "../sft.js";
import { sftStepMetrics } from "../step-metrics.js";
import { modelTemplateDeps } from "./template-deps.js";
import type { SftJobWork, TrainerUpdate } from "./types.js";

/**
 * An SFT job (`spec/training.md` §7): every row tokenized with the chat template and labelled per
 * `assistant_turns`, consecutive batches in file order with their own learning rates (rows longer
 * than the model's maximum are dropped without shifting the batches; a batch left with nothing to
 * train is skipped), one optimizer step per batch. Returns whether anything was trained.
 */
export function* sftJobSteps(model: LoadedModel, trainer: LoraTrainer, work: SftJobWork): Generator<TrainerUpdate, boolean> {
  const deps = modelTemplateDeps(model);
  const rows = work.rows.map((line, index) => {
    const loc = [`${work.fileName} row ${index + 1}`];
    return tokenizeSftExample(sftExampleFromJson(line, loc), deps, work.config.assistant_turns, loc);
  });
  const { batches } = buildSftBatches(rows, sftBatchPlan(work.config), model.config.maxPositionEmbeddings);
  yield { type: "started", numSequences: batches.length };
  for (const batch of batches) yield { type: "gradient_step", metrics: sftStepMetrics(trainer.sftStep(batch)) };
  return batches.length > 0;
}
