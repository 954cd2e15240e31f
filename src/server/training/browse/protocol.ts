import { z } from "zod";
import { JobRes } from "../jobs/protocol.js";
import { CursorLimit, cursorPageOf, nameField } from "../common/schemas.js";
import { ModelRes } from "../models/protocol.js";

/** Read-only listings beyond the preview interface, for the web UI and scripts. */

export const ModelListQuery = z.object({ project: nameField("project").optional().describe("Only this project's models") });

export const ModelListRes = z.object({ object: z.literal("list"), data: z.array(ModelRes) });

export const ModelJobsQuery = z.object({
  after: z.string().optional().describe("Id of the last job of the previous page"),
  limit: CursorLimit,
  order: z.enum(["asc", "desc"]).default("desc").describe("By submission order; desc lists the newest first"),
});

export const ModelJobsRes = cursorPageOf(JobRes);

export const TrajectoryGroupsQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const TrajectoryWithAdvantage = z
  .looseObject({
    reward: z.number(),
    advantage: z.number().describe("The group-relative advantage the trainer used (docs/api/training.md#advantages)"),
    trainer_logprobs: z
      .record(z.string(), z.array(z.number().nullable()))
      .nullable()
      .describe(
        "The trainer's recomputed logprob of each sampled token, keyed by the index of the Choice in messages_and_choices, aligned with its logprobs.content (null where a token was not scored); null when the trajectory was not trained (zero advantage, a job not run yet, or a trainer that does not report them)",
      ),
  })
  .describe("A trajectory exactly as submitted, plus its advantage and the trainer's logprobs");

export const TrajectoryGroupsRes = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ index: z.number().int(), trajectories: z.array(TrajectoryWithAdvantage), exceptions: z.array(z.unknown()) })),
  total: z.number().int().describe("How many groups the job has"),
  offset: z.number().int(),
  scale_rewards: z.boolean().describe("Whether advantages were divided by the group's reward std"),
});

export const ProjectListRes = z.object({
  object: z.literal("list"),
  entity: z.string().describe("The entity of the caller's key: trace project ids are entity/name"),
  data: z.array(
    z.object({
      name: z.string(),
      models: z.number().int().describe("Trainable models in the project"),
      traces: z.boolean().describe("Whether trace calls were logged to it (project_id entity/name)"),
    }),
  ),
});

export const ModelHistoryRes = z.object({
  object: z.literal("list"),
  data: z.array(
    z.object({
      step: z.number().int(),
      metrics: z.record(z.string(), z.number()).describe("{split}/{name} logged with POST /log; job/{name} of the rollouts of a job that started from this step; grad/{name}: the mean over its gradient steps"),
    }),
  ),
});
