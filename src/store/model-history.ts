import type { Kysely } from "kysely";
import { decodeJson } from "./json.js";
import type { Database, TrainingJobKind, TrainingJobStatus } from "./schema.js";

/** What a model's metric history is made of, read in three queries. */
export interface ModelHistoryRows {
  checkpoints: { step: number; metrics: Record<string, number> }[];
  /** Jobs that started training (they know their base step), in submission order. */
  jobs: { id: string; kind: TrainingJobKind; status: TrainingJobStatus; baseStep: number; input: string }[];
  /** The gradient_step event data of those jobs, by job id, in order. */
  gradientSteps: Map<string, Record<string, unknown>[]>;
}

/** The newest `maxJobs` started jobs are read: enough for any chart, bounded for a model with thousands. */
export async function readModelHistory(db: Kysely<Database>, modelId: string, maxJobs = 1000): Promise<ModelHistoryRows> {
  const checkpoints = await db.selectFrom("checkpoints").select(["step", "metrics"]).where("model_id", "=", modelId).orderBy("step").execute();
  const jobs = await db
    .selectFrom("training_jobs")
    .select(["id", "kind", "status", "base_step", "input"])
    .where("model_id", "=", modelId)
    .where("base_step", "is not", null)
    .where("status", "in", ["running", "succeeded"])
    .orderBy("position", "desc")
    .limit(maxJobs)
    .execute();
  jobs.reverse();
  const gradientSteps = new Map<string, Record<string, unknown>[]>();
  if (jobs.length > 0) {
    const events = await db
      .selectFrom("training_job_events")
      .select(["job_id", "data"])
      .where(
        "job_id",
        "in",
        jobs.map((job) => job.id),
      )
      .where("type", "=", "gradient_step")
      .orderBy("job_id")
      .orderBy("seq")
      .execute();
    for (const event of events) {
      const list = gradientSteps.get(event.job_id) ?? [];
      list.push(decodeJson<Record<string, unknown>>(event.data));
      gradientSteps.set(event.job_id, list);
    }
  }
  return {
    checkpoints: checkpoints.map((row) => ({ step: row.step, metrics: decodeJson<Record<string, number>>(row.metrics) })),
    jobs: jobs.map((job) => ({ id: job.id, kind: job.kind, status: job.status, baseStep: job.base_step!, input: job.input })),
    gradientSteps,
  };
}
