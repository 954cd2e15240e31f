import type { Kysely } from "kysely";

/**
 * The trainer's recomputed logprobs of the sampled turns an RL job trained on: one row per turn
 * (a Choice of a trajectory's messages_and_choices), its logprobs packed as base64 float32s.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("training_job_token_logprobs")
    .addColumn("job_id", "text", (col) => col.notNull().references("training_jobs.id").onDelete("cascade"))
    .addColumn("group_index", "integer", (col) => col.notNull())
    .addColumn("trajectory_index", "integer", (col) => col.notNull())
    .addColumn("item_index", "integer", (col) => col.notNull())
    .addColumn("logprobs", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("training_job_token_logprobs_pk", ["job_id", "group_index", "trajectory_index", "item_index"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("training_job_token_logprobs").execute();
}
