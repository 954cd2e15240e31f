import type { Kysely } from "kysely";

/**
 * External training workers (the PyTorch trainer): `api_keys.role` tells a user's key ("user")
 * from a worker's ("worker"), which only the worker protocol accepts; `training_workers` records
 * when each worker last asked for jobs and for which base models, so a queued job can say that no
 * worker of its kind is polling.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .addColumn("role", "text", (col) => col.notNull().defaultTo("user"))
    .execute();
  await db.schema
    .createTable("training_workers")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("key_id", "text", (col) => col.notNull())
    .addColumn("base_models", "text", (col) => col.notNull())
    .addColumn("last_seen_at", "text", (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("training_workers").execute();
  await db.schema.alterTable("api_keys").dropColumn("role").execute();
}
