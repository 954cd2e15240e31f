import { z } from "zod";
import { LINEAR_NAMES } from "../../../engine/model/types.js";
import { CursorLimit, nameField } from "../common/schemas.js";

/** Request and response schemas of the preview model registry and its checkpoints (`docs/api/training.md#models-and-checkpoints`). */

/** The most rank a model may ask for; ART's newest client asks up to 32, hosted services allow 64. */
export const MAX_LORA_RANK = 64;

export const LoraConfigReq = z.object({
  r: z.number().int().min(1).max(MAX_LORA_RANK).default(8).describe(`LoRA rank, 1 to ${MAX_LORA_RANK}`),
  lora_alpha: z.number().positive().max(4096).default(16).describe("LoRA alpha; the update is scaled by lora_alpha / r"),
  target_modules: z
    .union([z.literal("all-linear"), z.array(z.enum(LINEAR_NAMES as [string, ...string[]])).min(1)])
    .default([...LINEAR_NAMES])
    .describe(`The linear layers that get an adapter: "all-linear" or a non-empty list of ${LINEAR_NAMES.join(", ")}`),
});

export const ModelCreateReq = z.object({
  entity: z.string().nullish().describe("Entity that owns the model; null means the caller's entity"),
  project: nameField("project"),
  name: nameField("name").describe("Unique within the project"),
  base_model: z.string().min(1).describe("A base model id this service serves, or a checkpoint of one of your trained models to fork (wandb-artifact:///entity/project/name:stepN)"),
  return_existing: z.boolean().default(false).describe("Return the existing model instead of 409 when the name is taken"),
  lora_config: LoraConfigReq.nullish().describe("The LoRA adapter this model trains; default rank 8, alpha 16 on all linear layers. A fork keeps its checkpoint's."),
});

export const LoraConfigRes = z.object({ r: z.number().int(), lora_alpha: z.number(), target_modules: z.union([z.string(), z.array(z.string())]) });

export const ForkedFromRes = z.object({
  model_id: z.string().describe("The model the fork was made from (it may since have been deleted)"),
  name: z.string().describe("The checkpoint's name, wandb-artifact:///entity/project/name:stepN"),
  step: z.number().int(),
});

export const ModelRes = z.object({
  id: z.uuid(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullable(),
  created_at: z.string(),
  forked_from: ForkedFromRes.nullable().describe("The checkpoint this model started from; null for a model trained from its base"),
  lora_config: LoraConfigRes.describe("The LoRA adapter this model trains"),
});

export const ModelIdParams = z.object({ model_id: z.uuid() });

export const ModelDeleteRes = z.object({ model_id: z.uuid(), deleted_checkpoints: z.number().int(), deleted_run: z.boolean() });

export const CheckpointListQuery = z.object({
  after: z.string().optional().describe("Id of the last item of the previous page"),
  limit: CursorLimit,
  order: z.enum(["asc", "desc"]).default("asc"),
});

export const CheckpointItem = z.object({ id: z.uuid(), step: z.number().int(), metrics: z.record(z.string(), z.number()) });

export const CheckpointDeleteReq = z.object({ steps: z.array(z.number().int().min(0)) });

export const CheckpointDeleteRes = z.object({ deleted_count: z.number().int(), not_found_steps: z.array(z.number().int()) });
