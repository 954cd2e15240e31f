import type { Kysely } from "kysely";

/**
 * Two optional model settings, each a JSON text: `forked_from` (the checkpoint a model was forked
 * from: `{model_id, name, step}`) and `lora_config` (the adapter shape the model trains:
 * `{r, lora_alpha, target_modules}`). Null keeps the earlier meaning: a model of its own, rank 8.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("models").addColumn("forked_from", "text").execute();
  await db.schema.alterTable("models").addColumn("lora_config", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("models").dropColumn("lora_config").execute();
  await db.schema.alterTable("models").dropColumn("forked_from").execute();
}
