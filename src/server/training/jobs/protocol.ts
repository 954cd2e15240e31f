import { z } from "zod";
import { ExperimentalConfigSchema, resolveRlConfig } from "../../../engine/train/config.js";
import { SftConfigSchema } from "../../../engine/train/sft-config.js";
import { CursorLimit } from "../common/schemas.js";
import { TrajectoryGroupsSchema } from "../trajectories/protocol.js";

/** Requests and responses of training jobs and their events (docs/api/training.md#jobs). */

export const RlJobCreateReq = z.object({
  model_id: z.uuid(),
  trajectory_groups: TrajectoryGroupsSchema,
  // Stored resolved: every default applied (docs/api/training.md#rl-config).
  experimental_config: ExperimentalConfigSchema.nullish().transform(resolveRlConfig),
});

export const SftJobCreateReq = z.object({
  model_id: z.uuid(),
  training_data_url: z.string().min(1).describe("wandb-artifact:///entity/project/name:vN (or :latest), from POST /v1/preview/artifacts; or an http(s) URL of a train.jsonl, fetched when the job runs"),
  config: SftConfigSchema.nullish(),
  experimental_config: z.record(z.string(), z.unknown()).nullish(),
});

export const JobIdParams = z.object({ training_job_id: z.uuid() });

export const JobEventsQuery = z.object({
  after: z.string().optional().describe("Id of the last event of the previous page"),
  limit: CursorLimit,
});

export const JobRes = z.object({
  id: z.uuid(),
  model_id: z.uuid(),
  kind: z.enum(["rl", "sft"]),
  status: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]),
  created_at: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  training_start: z.string().nullable().describe("Alias of started_at"),
  training_end: z.string().nullable().describe("Alias of ended_at"),
  error_message: z.string().nullable(),
  step: z.number().int().nullable().describe("The checkpoint step the job committed; null until it succeeded"),
  waiting_for: z.string().nullable().describe("Set on a single job's read while it is queued for a trainer that is not there (e.g. no PyTorch worker polls for its base model)"),
});

export const JobEventItem = z.object({
  id: z.uuid(),
  type: z.enum(["training_started", "gradient_step", "training_ended", "training_failed"]),
  data: z.record(z.string(), z.unknown()),
});
