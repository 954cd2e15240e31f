import { type CompiledQuery, sql } from "kysely";
import type { DialectName } from "../../db.js";
import type { Sql } from "../../dialect.js";
import { bulkInsert, rawStatement } from "../../dialect.js";
import type { TraceDb } from "../call-tables.js";
import type { NumberLeaf } from "./number-leaves.js";

/**
 * Storage of the range index: a B-tree of the numeric leaves of calls by value,
 * `trace_call_numbers (project_id, path_key, value, call_id)` (its primary key), written with the
 * call in the same transaction. A part stored again adds its rows and leaves the old ones behind,
 * which only add candidates that the query's own condition rejects; deleting a call deletes the
 * rows of what it stores.
 */

export interface NumberRows {
  projectId: string;
  callId: string;
  leaves: NumberLeaf[];
}

/** One interval of a path's values to look up (bounds inclusive; undefined: unbounded). */
export interface ValueInterval {
  pathKey: number;
  overflowKey: number;
  low: number | undefined;
  high: number | undefined;
}

function rowsOf(documents: NumberRows[]): unknown[][] {
  const rows: unknown[][] = [];
  for (const doc of documents) for (const leaf of doc.leaves) rows.push([doc.projectId, leaf.pathKey, leaf.value, doc.callId]);
  return rows;
}

/** Statements that add the rows of one write (a row already there, from a part stored again, is kept). */
export function numberInsertStatements(dialect: DialectName, documents: NumberRows[]): CompiledQuery[] {
  return bulkInsert(dialect, "INSERT INTO trace_call_numbers (project_id, path_key, value, call_id)", 4, rowsOf(documents), "ON CONFLICT DO NOTHING");
}

/** Rows per DELETE: four parameters each. */
const DELETE_CHUNK = 256;

/** Statements that delete these rows (those of calls being deleted). */
export function numberDeleteStatements(dialect: DialectName, documents: NumberRows[]): CompiledQuery[] {
  const rows = rowsOf(documents);
  const statements: CompiledQuery[] = [];
  for (let start = 0; start < rows.length; start += DELETE_CHUNK) {
    const chunk = rows.slice(start, start + DELETE_CHUNK);
    const tuples = chunk.map(() => "(?, ?, ?, ?)").join(", ");
    // PostgreSQL types a VALUES list from its first row; the casts keep keys and values exact.
    const values = dialect === "postgres" ? `SELECT CAST(v.p AS text), CAST(v.k AS bigint), CAST(v.x AS double precision), CAST(v.c AS text) FROM (VALUES ${tuples}) AS v(p, k, x, c)` : `VALUES ${tuples}`;
    statements.push(rawStatement(dialect, `DELETE FROM trace_call_numbers WHERE (project_id, path_key, value, call_id) IN (${values})`, chunk.flat()));
  }
  return statements;
}

function intervalSelect(projectId: string, interval: ValueInterval): Sql {
  const bounds: Sql[] = [];
  if (interval.low !== undefined) bounds.push(sql` AND value >= ${interval.low}`);
  if (interval.high !== undefined) bounds.push(sql` AND value <= ${interval.high}`);
  return sql`SELECT call_id FROM trace_call_numbers WHERE project_id = ${projectId} AND path_key = ${interval.pathKey}${sql.join(bounds, sql``)} UNION ALL SELECT call_id FROM trace_call_numbers WHERE project_id = ${projectId} AND path_key = ${interval.overflowKey}`;
}

/**
 * The ids of calls with a numeric leaf in one of `intervals` (or an overflow row of its column), or
 * undefined when more than `limit` rows do; with `partial`, the first `limit` ids instead. An id may
 * repeat in the answer.
 */
export async function callsInIntervals(db: TraceDb, projectId: string, intervals: ValueInterval[], limit: number, partial = false): Promise<string[] | undefined> {
  const rows = (
    await sql<{ call_id: string }>`SELECT call_id FROM (${sql.join(
      intervals.map((interval) => intervalSelect(projectId, interval)),
      sql` UNION ALL `,
    )}) AS matched LIMIT ${limit + 1}`.execute(db)
  ).rows;
  if (rows.length > limit) return partial ? rows.slice(0, limit).map((row) => row.call_id) : undefined;
  return rows.map((row) => row.call_id);
}
