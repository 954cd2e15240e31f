import { type CompiledQuery, sql } from "kysely";
import type { DialectName } from "../../db.js";
import type { TraceDb } from "../call-tables.js";
import { bulkInsert } from "../../dialect.js";

/**
 * The call text index: a trigram index over the text that `$contains` searches in op_name,
 * display_name, inputs and output (and paths inside them). Like the leaf index it only narrows
 * which calls a query must look at; the query's own condition still decides, so it must never
 * miss a call that matches, while extra candidates cost only a wasted look-up.
 *
 * One document per stored call part (a start: op name, display name, inputs; an end: output; a
 * display name change), never updated in place: a part stored again adds a document and the old
 * one only adds a candidate. A document holds the stored JSON text, which contains the text of
 * every path inside it; when that text has escapes, the unescaped strings are added as well, since
 * a path that names a string compares its unescaped text.
 *
 * - SQLite: an FTS5 table without content, trigram tokenizer folding case, no positions
 *   (detail=none): a look-up asks for every trigram of the needle.
 * - PostgreSQL: a table of documents with a GIN `gin_trgm_ops` index (`pg_trgm`), looked up with
 *   ILIKE, which the index serves and rechecks.
 * Both fold case at least as much as the query's `lower()` does, so a case-insensitive match is
 * always a candidate; a case-sensitive match is one a fortiori.
 */

export interface TextDocument {
  projectId: string;
  callId: string;
  text: string;
}

/** A stored JSON column's searchable text: the JSON text, plus its strings unescaped when it has escapes. */
export function jsonSearchText(stored: string | null): string {
  if (stored === null) return "";
  if (!stored.includes("\\")) return stored;
  const strings: string[] = [];
  collectStrings(JSON.parse(stored), strings);
  // PostgreSQL text cannot hold NUL; needles with one are never looked up (`searchableNeedle`).
  return `${stored}\n${strings.join("\n").replaceAll("\u0000", "\n")}`;
}

function collectStrings(node: unknown, into: string[]): void {
  if (typeof node === "string") into.push(node);
  else if (Array.isArray(node)) for (const item of node) collectStrings(item, into);
  else if (node !== null && typeof node === "object") for (const key in node as Record<string, unknown>) collectStrings((node as Record<string, unknown>)[key], into);
}

/** Statements that add the documents of one write. */
export function textInsertStatements(dialect: DialectName, documents: TextDocument[]): CompiledQuery[] {
  const rows = documents.filter((doc) => doc.text.length > 0).map((doc) => [doc.text, doc.projectId, doc.callId]);
  return bulkInsert(dialect, "INSERT INTO trace_call_text (body, project_id, call_id)", 3, rows, "");
}

/** Whether the index can narrow a search for `needle` (trigram indexes need three characters). */
export function searchableNeedle(dialect: DialectName, needle: string): boolean {
  if (needle.includes("\u0000")) return false;
  // pg_trgm makes trigrams of runs of letters and digits only; without such a run it would read the
  // whole index.
  return dialect === "sqlite" ? [...needle].length >= 3 : /[A-Za-z0-9]{3}/.test(needle);
}

/** Most trigrams one SQLite look-up asks for: enough to be selective, few enough to stay quick. */
const MAX_TRIGRAMS = 12;

/** An FTS5 query asking for every (or, for long needles, a spread of) trigram of `needle`. */
export function trigramQuery(needle: string): string {
  const chars = [...needle];
  const trigrams = [...new Set(Array.from({ length: chars.length - 2 }, (_, i) => chars.slice(i, i + 3).join("")))];
  const picked = trigrams.length <= MAX_TRIGRAMS ? trigrams : Array.from({ length: MAX_TRIGRAMS }, (_, i) => trigrams[Math.round((i * (trigrams.length - 1)) / (MAX_TRIGRAMS - 1))]!);
  return picked.map((trigram) => `"${trigram.replaceAll('"', '""')}"`).join(" AND ");
}

/** `needle` as a LIKE pattern that matches any text containing it. */
export function containsPattern(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * The ids of the calls of `projectId` with a document that may contain one of `needles` (case
 * folded), or undefined when more than `limit` documents do. An id may repeat in the answer.
 * `searchPart` picks the part of a needle that PostgreSQL looks up.
 */
export async function callsWithText(db: TraceDb, dialect: DialectName, projectId: string, needles: string[], limit: number, searchPart?: (needle: string) => Promise<string>): Promise<string[] | undefined> {
  const ids: string[] = [];
  for (const needle of new Set(needles)) {
    const remaining = limit - ids.length;
    // On PostgreSQL a part of the needle may be cheaper to look up (`trigram-sample.ts`): it finds a superset.
    const rows =
      dialect === "sqlite"
        ? (await sql<{ call_id: string }>`SELECT call_id FROM trace_call_text WHERE trace_call_text MATCH ${trigramQuery(needle)} AND project_id = ${projectId} LIMIT ${remaining + 1}`.execute(db)).rows
        : (await sql<{ call_id: string }>`SELECT call_id FROM trace_call_text WHERE project_id = ${projectId} AND body ILIKE ${containsPattern(searchPart ? await searchPart(needle) : needle)} LIMIT ${remaining + 1}`.execute(db))
            .rows;
    if (rows.length > remaining) return undefined;
    for (const row of rows) ids.push(row.call_id);
  }
  return ids;
}
