import { type Kysely, sql } from "kysely";

// Migrations see the database as it was at the time they were written, hence `Kysely<any>`.
export async function up(db: Kysely<any>): Promise<void> {
  // Jobs keep their model id as plain text (no foreign key): a job outlives a deleted model so that
  // its events, ending in training_failed, stay readable to the client that polls them.
  await db.schema
    .createTable("training_jobs")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("entity", "text", (col) => col.notNull())
    .addColumn("model_id", "text", (col) => col.notNull())
    .addColumn("kind", "text", (col) => col.notNull())
    .addColumn("status", "text", (col) => col.notNull())
    .addColumn("position", "integer", (col) => col.notNull())
    .addColumn("input", "text", (col) => col.notNull())
    .addColumn("config", "text", (col) => col.notNull())
    .addColumn("request_hash", "text", (col) => col.notNull())
    .addColumn("idempotency_key", "text")
    .addColumn("attempts", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("lease_owner", "text")
    .addColumn("lease_expires_at", "text")
    .addColumn("last_worker", "text")
    .addColumn("base_step", "integer")
    .addColumn("kl_reference_step", "integer")
    .addColumn("result_step", "integer")
    .addColumn("error_message", "text")
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("started_at", "text")
    .addColumn("ended_at", "text")
    .addUniqueConstraint("training_jobs_model_position", ["model_id", "position"])
    .addUniqueConstraint("training_jobs_entity_idempotency_key", ["entity", "idempotency_key"])
    .execute();
  await db.schema.createIndex("training_jobs_status").on("training_jobs").columns(["status", "position"]).execute();
  // The database itself guarantees one running job per model, whatever the workers race on.
  await db.schema.createIndex("training_jobs_one_running_per_model").unique().on("training_jobs").column("model_id").where(sql.ref("status"), "=", sql.lit("running")).execute();

  await db.schema
    .createTable("training_job_events")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("job_id", "text", (col) => col.notNull().references("training_jobs.id").onDelete("cascade"))
    .addColumn("seq", "integer", (col) => col.notNull())
    .addColumn("type", "text", (col) => col.notNull())
    .addColumn("data", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addUniqueConstraint("training_job_events_job_seq", ["job_id", "seq"])
    .execute();

  await db.schema
    .createTable("artifacts")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("entity", "text", (col) => col.notNull())
    .addColumn("project", "text", (col) => col.notNull())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("version", "integer", (col) => col.notNull())
    .addColumn("type", "text", (col) => col.notNull())
    .addColumn("files", "text", (col) => col.notNull())
    .addColumn("metadata", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addUniqueConstraint("artifacts_entity_project_name_version", ["entity", "project", "name", "version"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("artifacts").execute();
  await db.schema.dropTable("training_job_events").execute();
  await db.schema.dropTable("training_jobs").execute();
}
