import type { Kysely } from "kysely";
import { decodeJson, encodeJson } from "./json.js";
import type { Database } from "./schema.js";
import { nowIso } from "./time.js";

/**
 * The external training workers the server has heard from: each claim records the worker and the
 * base models it asked for, so a queued job can tell whether any worker of its kind is polling.
 */
export async function recordWorkerPoll(db: Kysely<Database>, worker: { id: string; keyId: string; baseModels: readonly string[] }): Promise<void> {
  const row = { key_id: worker.keyId, base_models: encodeJson([...worker.baseModels]), last_seen_at: nowIso() };
  const updated = await db.updateTable("training_workers").set(row).where("id", "=", worker.id).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await db
    .insertInto("training_workers")
    .values({ id: worker.id, ...row })
    .onConflict((conflict) => conflict.column("id").doUpdateSet(row))
    .execute();
}

/** Whether some worker asked for jobs of `baseModel` within the last `withinMs`. */
export async function workerPollsFor(db: Kysely<Database>, baseModel: string, withinMs: number): Promise<boolean> {
  const since = new Date(Date.now() - withinMs).toISOString();
  const rows = await db.selectFrom("training_workers").select("base_models").where("last_seen_at", ">=", since).execute();
  return rows.some((row) => decodeJson<string[]>(row.base_models).includes(baseModel));
}
