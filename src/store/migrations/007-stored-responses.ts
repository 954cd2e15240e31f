import type { Kysely } from "kysely";

/**
 * Responses API results kept for `previous_response_id` and `GET /v1/responses/{id}`: per response
 * its entity (a key only ever sees its own), the conversation it ended (chat messages, JSON) and
 * the response object as returned (JSON).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("stored_responses")
    .addColumn("id", "text", (column) => column.primaryKey())
    .addColumn("entity", "text", (column) => column.notNull())
    .addColumn("model", "text", (column) => column.notNull())
    .addColumn("conversation", "text", (column) => column.notNull())
    .addColumn("body", "text", (column) => column.notNull())
    .addColumn("created_at", "text", (column) => column.notNull())
    .execute();
  await db.schema.createIndex("stored_responses_entity_created").on("stored_responses").columns(["entity", "created_at"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("stored_responses").execute();
}
