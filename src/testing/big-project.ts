import { sql } from "kysely";
import type { Store } from "../store/db.js";

/**
 * Fills `projectId` with `count` finished calls of about `inputChars` characters of inputs each, in
 * one INSERT … SELECT over generated numbers (a few seconds for 100k calls), for tests that need a
 * large project without sending it over HTTP. Calls are roots of their own traces, a second apart.
 */
export async function insertManyCalls(store: Store, projectId: string, count: number, inputChars = 1000): Promise<void> {
  const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(inputChars / 27)).slice(0, inputChars);
  const columns = sql`project_id, id, op_name, trace_id, started_at, ended_at, attributes, inputs, output, summary, wb_user_id`;
  const op = `weave:///${projectId}/op/big:v0`;
  if (store.dialect === "postgres") {
    await sql`INSERT INTO trace_calls (${columns})
      SELECT ${projectId}, 'c' || lpad(i::text, 9, '0'), ${op}, 't' || i,
        to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        to_char(timestamp '2026-01-01' + i * interval '1 second' + interval '5 milliseconds', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        '{}', '{"question":"' || ${filler} || i || '"}', '{"answer":' || i || '}', '{}', 'u'
      FROM generate_series(0, ${count - 1}::int) AS i`.execute(store.db);
    return;
  }
  await sql`INSERT INTO trace_calls (${columns})
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})
    SELECT ${projectId}, printf('c%09d', i), ${op}, 't' || i,
      strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + i, 'unixepoch'),
      strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + i + 0.005, 'unixepoch'),
      '{}', '{"question":"' || ${filler} || i || '"}', '{"answer":' || i || '}', '{}', 'u'
    FROM n`.execute(store.db);
}
