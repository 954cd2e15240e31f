import { type CompiledQuery, sql } from "kysely";
import type { DialectName } from "../../db.js";
import type { TraceDb } from "../call-tables.js";
import { bulkInsert } from "../../dialect.js";

/**
 * Storage of the call leaf index (keys from `leaf-keys.ts`): an inverted index from key to call,
 * one document per stored call part (a start, an end, or both), never updated in place. A part
 * stored again adds a document and leaves the old one behind, which only adds a candidate that
 * the query's own condition then rejects.
 *
 * - SQLite: an FTS5 table without content, whose terms are the keys (`k` and digits) and which keeps the
 *   call id beside them. FTS5 writes new segments and merges them in the background, so adding a
 *   document costs about a third of what one index row per key costs.
 * - PostgreSQL: a table of (call id, keys) with a GIN index on the keys, whose pending list plays
 *   the same part.
 */

export interface LeafDocument {
  callId: string;
  keys: number[];
}

// Decimal: converting doubles to base 36 takes several times longer.
const term = (key: number) => `k${key}`;

/** Statements that add the documents of one write. */
export function leafInsertStatements(dialect: DialectName, documents: LeafDocument[]): CompiledQuery[] {
  const rows = documents.filter((doc) => doc.keys.length > 0).map((doc) => (dialect === "sqlite" ? [doc.keys.map(term).join(" "), doc.callId] : [doc.callId, doc.keys]));
  return dialect === "sqlite" ? bulkInsert(dialect, "INSERT INTO trace_call_terms (terms, call_id)", 2, rows, "") : bulkInsert(dialect, "INSERT INTO trace_call_leaves (call_id, keys)", 2, rows, "");
}

/**
 * The ids of calls with a document holding one of `keys`, or undefined when more than `limit`
 * documents do. An id may repeat in the answer (several documents of one call).
 */
export async function callsWithKeys(db: TraceDb, dialect: DialectName, keys: number[], limit: number): Promise<string[] | undefined> {
  const rows =
    dialect === "sqlite"
      ? (await sql<{ call_id: string }>`SELECT call_id FROM trace_call_terms WHERE trace_call_terms MATCH ${keys.map(term).join(" OR ")} LIMIT ${limit + 1}`.execute(db)).rows
      : (await sql<{ call_id: string }>`SELECT call_id FROM trace_call_leaves WHERE keys && CAST(${keys.map(String)} AS bigint[]) LIMIT ${limit + 1}`.execute(db)).rows;
  return rows.length > limit ? undefined : rows.map((row) => row.call_id);
}
