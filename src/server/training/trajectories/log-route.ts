import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { trajectoryGroupLogMetrics } from "../../../engine/train/log-metrics.js";
import { latestCheckpoint, mergeCheckpointMetrics } from "../../../store/checkpoints.js";
import { getModel } from "../../../store/models.js";
import { principalOf } from "../../auth.js";
import { notFound } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { ModelIdParams } from "../models/protocol.js";
import { TrajectoryGroupsSchema } from "./protocol.js";

export const LogReq = z.object({
  split: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "split must be 1 to 64 letters, digits, '_', '.', '-' (e.g. train, val)"),
  trajectory_groups: TrajectoryGroupsSchema,
});

export const LogRes = z.object({
  step: z.number().int().describe("The checkpoint step the metrics were stored on"),
  metrics: z.record(z.string(), z.number()).describe("The metrics this call logged, as {split}/{metric}"),
});

/**
 * POST /preview/models/{id}/log (docs/api/training.md#log): computes the metrics of the groups and
 * stores them as `{split}/{metric}` on the model's current checkpoint, where the checkpoint list
 * shows them. A model without checkpoints gets a step-0 checkpoint (its base weights) for them.
 */
export async function logRoute(app: FastifyInstance): Promise<void> {
  const { store } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/preview/models/:model_id/log",
      summary: "Log trajectory groups: store their metrics on the model's current step",
      tags: ["training"],
      params: ModelIdParams,
      body: LogReq,
      response: LogRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const model = await getModel(store.db, principalOf(request).entity, params.model_id);
      if (!model) throw notFound(`Model '${params.model_id}' not found`);
      const metrics: Record<string, number> = {};
      for (const [name, value] of Object.entries(trajectoryGroupLogMetrics(body.trajectory_groups))) metrics[`${body.split}/${name}`] = value;
      if (Object.keys(metrics).length === 0) {
        return { step: (await latestCheckpoint(store.db, model.id))?.step ?? 0, metrics };
      }
      const { step } = await mergeCheckpointMetrics(store.db, model.id, metrics);
      return { step, metrics };
    },
  );
}
