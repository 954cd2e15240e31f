import { randomBytes, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { insertCheckpoint } from "./checkpoints.js";
import { isUniqueViolation } from "./errors.js";
import type { Database, ModelsTable } from "./schema.js";
import { cancelActiveJobsOfModel } from "./training-jobs.js";
import { nowIso } from "./time.js";

export type ModelRow = ModelsTable;

export interface NewModel {
  entity: string;
  project: string;
  name: string;
  base_model: string;
  /** JSON text: the checkpoint a fork starts from (see `ModelsTable.forked_from`). */
  forked_from?: string | null;
  /** JSON text: the model's LoRA shape (see `ModelsTable.lora_config`). */
  lora_config?: string | null;
}

/** A fork's step 0: the checkpoint files (name → blob digest) it starts from. */
export interface InitialCheckpoint {
  files: Record<string, string>;
}

export type CreateModelResult = { created: true; model: ModelRow } | { created: false; model: ModelRow };

/**
 * Registers a trainable model. A name already taken in the project returns the existing row with
 * `created: false`, whether it was found first or lost a race on the unique constraint.
 */
export async function createModel(db: Kysely<Database>, input: NewModel, initial?: InitialCheckpoint): Promise<CreateModelResult> {
  const existing = await findModelByName(db, input.entity, input.project, input.name);
  if (existing) return { created: false, model: existing };
  const row: ModelRow = {
    id: randomUUID(),
    ...input,
    forked_from: input.forked_from ?? null,
    lora_config: input.lora_config ?? null,
    run_id: randomBytes(4).toString("hex"),
    created_at: nowIso(),
  };
  try {
    // A fork and its step 0 appear together or not at all.
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("models").values(row).execute();
      if (initial) await insertCheckpoint(trx, { modelId: row.id, step: 0, files: initial.files });
    });
    return { created: true, model: row };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await findModelByName(db, input.entity, input.project, input.name);
    if (!winner) throw error;
    return { created: false, model: winner };
  }
}

export async function findModelByName(db: Kysely<Database>, entity: string, project: string, name: string): Promise<ModelRow | undefined> {
  return db.selectFrom("models").selectAll().where("entity", "=", entity).where("project", "=", project).where("name", "=", name).executeTakeFirst();
}

/** Every model of `entity` with this name, across its projects (ART's `name@step` names carry no project). */
export async function findModelsNamed(db: Kysely<Database>, entity: string, name: string): Promise<ModelRow[]> {
  return db.selectFrom("models").selectAll().where("entity", "=", entity).where("name", "=", name).orderBy("project").execute();
}

/** The model with this id if it belongs to `entity`; another entity's model is indistinguishable from a missing one. */
export async function getModel(db: Kysely<Database>, entity: string, id: string): Promise<ModelRow | undefined> {
  return db.selectFrom("models").selectAll().where("id", "=", id).where("entity", "=", entity).executeTakeFirst();
}

export async function listModels(db: Kysely<Database>, entity: string): Promise<ModelRow[]> {
  return db.selectFrom("models").selectAll().where("entity", "=", entity).orderBy("created_at").orderBy("id").execute();
}

/**
 * Deletes the model and its checkpoints in one transaction; returns how many checkpoints went with
 * it. Its queued and running jobs end as cancelled (their records stay readable).
 */
export async function deleteModel(db: Kysely<Database>, id: string): Promise<{ deletedCheckpoints: number; cancelledJobs: number }> {
  return db.transaction().execute(async (trx) => {
    // A write first, so that SQLite takes its write lock before anything is read.
    const result = await trx.deleteFrom("checkpoints").where("model_id", "=", id).executeTakeFirst();
    const cancelledJobs = await cancelActiveJobsOfModel(trx, id, "Training job was cancelled because its model was deleted");
    await trx.deleteFrom("models").where("id", "=", id).execute();
    return { deletedCheckpoints: Number(result.numDeletedRows), cancelledJobs };
  });
}
