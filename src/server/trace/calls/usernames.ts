import type { Kysely } from "kysely";
import type { Database } from "../../../store/schema.js";
import { usernamesOfKeyIds } from "../../../store/keys.js";

/**
 * `include_usernames` (`docs/api/trace.md#objects`): each call whose `wb_user_id` is a known key gets that
 * user's name as `wb_username`; the field stays absent where none resolves.
 */
export async function attachUsernames<C extends { wb_user_id?: string | null; wb_username?: string }>(db: Kysely<Database>, calls: C[]): Promise<void> {
  const ids = calls.map((call) => call.wb_user_id).filter((id): id is string => typeof id === "string" && id !== "");
  const names = await usernamesOfKeyIds(db, ids);
  for (const call of calls) {
    const name = call.wb_user_id ? names.get(call.wb_user_id) : undefined;
    if (name !== undefined) call.wb_username = name;
  }
}
