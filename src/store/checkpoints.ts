import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { CursorNotFoundError, isUniqueViolation } from "./errors.js";
import { decodeJson, encodeJson } from "./json.js";
import { type CursorPage, toCursorPage } from "./pagination.js";
import type { CheckpointsTable, Database } from "./schema.js";
import { nowIso } from "./time.js";

export interface Checkpoint {
  id: string;
  step: number;
  metrics: Record<string, number>;
}

export interface CheckpointPageQuery {
  after?: string;
  limit: number;
  order: "asc" | "desc";
}

function toCheckpoint(row: Pick<CheckpointsTable, "id" | "step" | "metrics">): Checkpoint {
  return { id: row.id, step: row.step, metrics: decodeJson<Record<string, number>>(row.metrics) };
}

/** One page of a model's checkpoints ordered by step; `after` must name one of them. */
export async function pageCheckpoints(db: Kysely<Database>, modelId: string, query: CheckpointPageQuery): Promise<CursorPage<Checkpoint>> {
  let select = db.selectFrom("checkpoints").select(["id", "step", "metrics"]).where("model_id", "=", modelId);
  if (query.after !== undefined) {
    const cursor = await db.selectFrom("checkpoints").select("step").where("model_id", "=", modelId).where("id", "=", query.after).executeTakeFirst();
    if (!cursor) throw new CursorNotFoundError(query.after);
    select = select.where("step", query.order === "asc" ? ">" : "<", cursor.step);
  }
  const rows = await select
    .orderBy("step", query.order)
    .limit(query.limit + 1)
    .execute();
  return toCursorPage(rows.map(toCheckpoint), query.limit);
}

export async function latestCheckpoint(db: Kysely<Database>, modelId: string): Promise<CheckpointsTable | undefined> {
  return db.selectFrom("checkpoints").selectAll().where("model_id", "=", modelId).orderBy("step", "desc").limit(1).executeTakeFirst();
}

export async function getCheckpointByStep(db: Kysely<Database>, modelId: string, step: number): Promise<CheckpointsTable | undefined> {
  return db.selectFrom("checkpoints").selectAll().where("model_id", "=", modelId).where("step", "=", step).executeTakeFirst();
}

export interface NewCheckpoint {
  modelId: string;
  step: number;
  files: Record<string, string> | null;
  metrics?: Record<string, number>;
}

export async function insertCheckpoint(db: Kysely<Database>, input: NewCheckpoint): Promise<Checkpoint> {
  const row: CheckpointsTable = {
    id: randomUUID(),
    model_id: input.modelId,
    step: input.step,
    metrics: encodeJson(input.metrics ?? {}),
    files: input.files ? encodeJson(input.files) : null,
    created_at: nowIso(),
  };
  await db.insertInto("checkpoints").values(row).execute();
  return toCheckpoint(row);
}

/** Deletes the given steps; reports the steps that had no checkpoint, in request order. */
export async function deleteCheckpointSteps(db: Kysely<Database>, modelId: string, steps: number[]): Promise<{ deletedCount: number; notFoundSteps: number[] }> {
  const unique = [...new Set(steps)];
  if (unique.length === 0) return { deletedCount: 0, notFoundSteps: [] };
  return db.transaction().execute(async (trx) => {
    const present = await trx.selectFrom("checkpoints").select("step").where("model_id", "=", modelId).where("step", "in", unique).execute();
    const presentSteps = new Set(present.map((row) => row.step));
    if (presentSteps.size > 0) {
      await trx
        .deleteFrom("checkpoints")
        .where("model_id", "=", modelId)
        .where("step", "in", [...presentSteps])
        .execute();
    }
    return { deletedCount: presentSteps.size, notFoundSteps: unique.filter((step) => !presentSteps.has(step)) };
  });
}

/**
 * Merges logged metrics into the model's current (latest) checkpoint. A model without checkpoints
 * gets a step-0 checkpoint of its base weights to carry them, which is what ART reads as step 0.
 * Returns the step and its merged metrics.
 */
export async function mergeCheckpointMetrics(db: Kysely<Database>, modelId: string, metrics: Record<string, number>): Promise<{ step: number; metrics: Record<string, number> }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        // A no-op write that returns the row it locked (the row lock on PostgreSQL, the write lock
        // on SQLite): the metrics are read under the lock, so concurrent logs cannot lose updates.
        const latestStep = trx
          .selectFrom("checkpoints")
          .select((eb) => eb.fn.max("step").as("step"))
          .where("model_id", "=", modelId);
        const locked = await trx
          .updateTable("checkpoints")
          .set((eb) => ({ metrics: eb.ref("metrics") }))
          .where("model_id", "=", modelId)
          .where("step", "=", latestStep)
          .returning(["id", "step", "metrics"])
          .executeTakeFirst();
        if (!locked) {
          const created = await insertCheckpoint(trx, { modelId, step: 0, files: null, metrics });
          return { step: created.step, metrics: created.metrics };
        }
        const merged = { ...decodeJson<Record<string, number>>(locked.metrics), ...metrics };
        await trx
          .updateTable("checkpoints")
          .set({ metrics: encodeJson(merged) })
          .where("id", "=", locked.id)
          .execute();
        return { step: locked.step, metrics: merged };
      });
    } catch (error) {
      // Another log created step 0 first: merge into it on the next round.
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
  }
}

/** One logged metric over a model's checkpoints up to `maxStep`, in step order (steps without it are left out). */
export async function checkpointMetricHistory(db: Kysely<Database>, modelId: string, metric: string, maxStep: number): Promise<{ step: number; value: number }[]> {
  const rows = await db.selectFrom("checkpoints").select(["step", "metrics"]).where("model_id", "=", modelId).where("step", "<=", maxStep).orderBy("step").execute();
  return rows.flatMap((row) => {
    const value = decodeJson<Record<string, unknown>>(row.metrics)[metric];
    return typeof value === "number" && Number.isFinite(value) ? [{ step: row.step, value }] : [];
  });
}

/**
 * Adds an imported adapter as the model's next checkpoint (step 0 when it has none) and records
 * the adapter's LoRA shape on the model, in one transaction. A concurrent new checkpoint makes
 * the insert a unique violation, which the caller reports.
 */
export async function importCheckpoint(db: Kysely<Database>, modelId: string, files: Record<string, string>, loraConfig: string): Promise<Checkpoint> {
  return db.transaction().execute(async (trx) => {
    // A write first, so that SQLite takes its write lock before anything is read.
    await trx.updateTable("models").set({ lora_config: loraConfig }).where("id", "=", modelId).execute();
    const latest = await trx
      .selectFrom("checkpoints")
      .select((eb) => eb.fn.max("step").as("step"))
      .where("model_id", "=", modelId)
      .executeTakeFirst();
    const step = latest?.step === null || latest?.step === undefined ? 0 : Number(latest.step) + 1;
    return insertCheckpoint(trx, { modelId, step, files });
  });
}
