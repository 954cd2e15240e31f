import type { Kysely } from "kysely";

// Migrations see the database as it was at the time they were written, hence `Kysely<any>`.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("entity", "text", (col) => col.notNull())
    .addColumn("name", "text")
    .addColumn("key_hash", "text", (col) => col.notNull().unique())
    .addColumn("key_prefix", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("revoked_at", "text")
    .execute();

  await db.schema
    .createTable("models")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("entity", "text", (col) => col.notNull())
    .addColumn("project", "text", (col) => col.notNull())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("base_model", "text", (col) => col.notNull())
    .addColumn("run_id", "text")
    .addColumn("created_at", "text", (col) => col.notNull())
    .addUniqueConstraint("models_entity_project_name", ["entity", "project", "name"])
    .execute();

  await db.schema
    .createTable("checkpoints")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("model_id", "text", (col) => col.notNull().references("models.id").onDelete("cascade"))
    .addColumn("step", "integer", (col) => col.notNull())
    .addColumn("metrics", "text", (col) => col.notNull().defaultTo("{}"))
    .addColumn("files", "text")
    .addColumn("created_at", "text", (col) => col.notNull())
    .addUniqueConstraint("checkpoints_model_step", ["model_id", "step"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("checkpoints").execute();
  await db.schema.dropTable("models").execute();
  await db.schema.dropTable("api_keys").execute();
}
