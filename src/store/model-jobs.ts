import type { Kysely } from "kysely";
import { CursorNotFoundError } from "./errors.js";
import { type CursorPage, toCursorPage } from "./pagination.js";
import type { Database } from "./schema.js";
import type { TrainingJobRow } from "./training-jobs.js";

export interface ModelJobsQuery {
  after?: string;
  limit: number;
  /** By queue position: "desc" lists the newest job first. */
  order: "asc" | "desc";
}

/** One page of a model's jobs in queue order; `after` must name one of them. */
export async function pageModelJobs(db: Kysely<Database>, modelId: string, query: ModelJobsQuery): Promise<CursorPage<TrainingJobRow>> {
  let select = db.selectFrom("training_jobs").selectAll().where("model_id", "=", modelId);
  if (query.after !== undefined) {
    const cursor = await db.selectFrom("training_jobs").select("position").where("model_id", "=", modelId).where("id", "=", query.after).executeTakeFirst();
    if (!cursor) throw new CursorNotFoundError(query.after);
    select = select.where("position", query.order === "asc" ? ">" : "<", cursor.position);
  }
  // (model_id, position) is unique, so its index serves both the filter and the order.
  const rows = await select
    .orderBy("position", query.order)
    .limit(query.limit + 1)
    .execute();
  return toCursorPage(rows, query.limit);
}
