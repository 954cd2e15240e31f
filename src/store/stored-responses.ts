import type { Kysely } from "kysely";
import { decodeJson, encodeJson } from "./json.js";
import type { Database } from "./schema.js";
import { nowIso } from "./time.js";

/** A Responses API result as stored: the conversation it ended and the object returned. */
export interface StoredResponse {
  id: string;
  entity: string;
  model: string;
  conversation: unknown[];
  body: Record<string, unknown>;
  created_at: string;
}

export async function saveResponse(db: Kysely<Database>, input: Omit<StoredResponse, "created_at">): Promise<void> {
  await db
    .insertInto("stored_responses")
    .values({ id: input.id, entity: input.entity, model: input.model, conversation: encodeJson(input.conversation), body: encodeJson(input.body), created_at: nowIso() })
    .execute();
}

/** The entity's response with this id; another entity's is not found, exactly like a missing one. */
export async function findResponse(db: Kysely<Database>, entity: string, id: string): Promise<StoredResponse | undefined> {
  const row = await db.selectFrom("stored_responses").selectAll().where("id", "=", id).where("entity", "=", entity).executeTakeFirst();
  if (!row) return undefined;
  return { ...row, conversation: decodeJson<unknown[]>(row.conversation), body: decodeJson<Record<string, unknown>>(row.body) };
}

/** Deletes the entity's response; false when it has none with this id. */
export async function deleteResponse(db: Kysely<Database>, entity: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom("stored_responses").where("id", "=", id).where("entity", "=", entity).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
