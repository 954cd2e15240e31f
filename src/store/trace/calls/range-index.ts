import { type CompiledQuery, sql } from "kysely";
import type { DialectName } from "../../db.js";
import type { Sql } from "../../dialect.js";
import { bulkInsert, powerOfTwoChunks, rawStatement, traceSql } from "../../dialect.js";
import type { TraceDb } from "../call-tables.js";
import { callLatencyText } from "./fields.js";
import { latencyPathKey, type NumberLeaf } from "./number-leaves.js";

/**
 * Storage of the range index: a B-tree of the numeric leaves of calls by value,
 * `trace_call_numbers (project_id, path_key, exact, value, call_id)` (its primary key), written
 * with the call in the same transaction. `exact` rows hold the value the databases read (compared
 * with the bounds as written), the others a value they may read a unit in the last place apart
 * (compared with widened bounds). Each ended call also has an exact row of its latency, computed by
 * the database with the query's own expression. A part stored again adds its rows and leaves the
 * old ones behind, which only add candidates that the query's own condition rejects; deleting a
 * call deletes the rows of what it stores.
 */

export interface NumberRows {
  projectId: string;
  callId: string;
  leaves: NumberLeaf[];
}

/** Bounds of values (undefined: unbounded), each inclusive unless strict. */
export interface Bounds {
  low: number | undefined;
  lowStrict: boolean;
  high: number | undefined;
  highStrict: boolean;
}

/**
 * One interval of a path's values to look up: `exact` bounds for exact rows, `widened` (inclusive)
 * ones for the others; `overflowKey` names the column's overflow row (none for the latency).
 */
export interface ValueInterval {
  pathKey: number;
  overflowKey: number | undefined;
  exact: Bounds;
  widened: Bounds | undefined;
}

function rowsOf(documents: NumberRows[]): unknown[][] {
  const rows: unknown[][] = [];
  for (const doc of documents) for (const leaf of doc.leaves) rows.push([doc.projectId, leaf.pathKey, leaf.exact ? 1 : 0, leaf.value, doc.callId]);
  return rows;
}

/** Statements that add the rows of one write (a row already there, from a part stored again, is kept). */
export function numberInsertStatements(dialect: DialectName, documents: NumberRows[]): CompiledQuery[] {
  return bulkInsert(dialect, "INSERT INTO trace_call_numbers (project_id, path_key, exact, value, call_id)", 5, rowsOf(documents), "ON CONFLICT DO NOTHING");
}

/** A call's latency as the query computes it, over the calls row named `table`. */
export function latencyText(dialect: DialectName, table: string): string {
  return callLatencyText(traceSql(dialect), table);
}

/**
 * Statements that add the latency rows of these calls where they have ended (run after the calls'
 * own writes, in the same transaction: a start or an end may be the part that completes a call).
 */
export function latencyInsertStatements(dialect: DialectName, projectId: string, callIds: string[]): CompiledQuery[] {
  const latency = latencyText(dialect, "c");
  // Power-of-two chunks: a few statement texts, which the prepared-statement cache keeps.
  return powerOfTwoChunks(callIds, 256).map((ids) =>
    rawStatement(
      dialect,
      `INSERT INTO trace_call_numbers (project_id, path_key, exact, value, call_id) SELECT c.project_id, CAST(? AS bigint), 1, ${latency}, c.id FROM trace_calls c WHERE c.project_id = ? AND c.id IN (${ids.map(() => "?").join(", ")}) AND c.started_at IS NOT NULL AND c.ended_at IS NOT NULL AND c.deleted_at IS NULL AND ${latency} IS NOT NULL ON CONFLICT DO NOTHING`,
      [latencyPathKey(), projectId, ...ids],
    ),
  );
}

/** The latency row of a deleted call, from its stored times (`latency` as `latencyText` gives it). */
export function latencyLeaf(latency: number | string | null | undefined): NumberLeaf[] {
  return latency === null || latency === undefined ? [] : [{ pathKey: latencyPathKey(), value: Number(latency), exact: true }];
}

/** Rows per DELETE: five parameters each. */
const DELETE_CHUNK = 256;

/** Statements that delete these rows (those of calls being deleted). */
export function numberDeleteStatements(dialect: DialectName, documents: NumberRows[]): CompiledQuery[] {
  const rows = rowsOf(documents);
  const statements: CompiledQuery[] = [];
  for (let start = 0; start < rows.length; start += DELETE_CHUNK) {
    const chunk = rows.slice(start, start + DELETE_CHUNK);
    const tuples = chunk.map(() => "(?, ?, ?, ?, ?)").join(", ");
    // PostgreSQL types a VALUES list from its first row; the casts keep keys and values exact.
    const values = dialect === "postgres" ? `SELECT CAST(v.p AS text), CAST(v.k AS bigint), CAST(v.e AS smallint), CAST(v.x AS double precision), CAST(v.c AS text) FROM (VALUES ${tuples}) AS v(p, k, e, x, c)` : `VALUES ${tuples}`;
    statements.push(rawStatement(dialect, `DELETE FROM trace_call_numbers WHERE (project_id, path_key, exact, value, call_id) IN (${values})`, chunk.flat()));
  }
  return statements;
}

function boundsSql(bounds: Bounds): Sql {
  const parts: Sql[] = [];
  if (bounds.low !== undefined) parts.push(bounds.lowStrict ? sql` AND value > ${bounds.low}` : sql` AND value >= ${bounds.low}`);
  if (bounds.high !== undefined) parts.push(bounds.highStrict ? sql` AND value < ${bounds.high}` : sql` AND value <= ${bounds.high}`);
  return sql.join(parts, sql``);
}

function intervalSelect(projectId: string, interval: ValueInterval): Sql {
  const rows = (exact: 0 | 1, bounds: Bounds) => sql`SELECT call_id FROM trace_call_numbers WHERE project_id = ${projectId} AND path_key = ${interval.pathKey} AND exact = ${exact}${boundsSql(bounds)}`;
  const parts = [rows(1, interval.exact)];
  if (interval.widened) parts.push(rows(0, interval.widened));
  if (interval.overflowKey !== undefined) parts.push(sql`SELECT call_id FROM trace_call_numbers WHERE project_id = ${projectId} AND path_key = ${interval.overflowKey}`);
  return sql.join(parts, sql` UNION ALL `);
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
