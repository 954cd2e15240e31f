import { CompiledQuery, type RawBuilder, sql } from "kysely";
import type { DialectName } from "./db.js";
import { QueryError } from "./trace/query/errors.js";

/**
 * Everything that differs between SQLite and PostgreSQL, in one place: expressions (`TraceSql`),
 * ordering by code point, and statements written as text with `?` placeholders (bulk writes).
 */

export type Sql = RawBuilder<unknown>;

/**
 * The SQL that differs between SQLite and PostgreSQL, in one place. JSON values live in text
 * columns; these helpers read a leaf at a path (list indexes as numeric segments) in two forms:
 * - `jsonText`: the leaf as text — a string's own text, otherwise its JSON text (`1`, `true`,
 *   `{"a":1}`); NULL when missing or JSON null;
 * - `numberOf(text)`: the number a text spells (a JSON number, or a string such as "5"); NULL
 *   otherwise.
 * Comparing these forms gives the type-tolerant rule of `docs/api/trace.md#query-language`.
 */
export interface TraceSql {
  dialect: DialectName;
  jsonText(doc: Sql, path: string[]): Sql;
  numberOf(text: Sql): Sql;
  /** UTF-8 byte length of a text. */
  byteLength(text: Sql): Sql;
  /** 1-based position of `needle` in `haystack`, 0 when absent. */
  position(needle: Sql, haystack: Sql): Sql;
  /** A predicate made two-valued: NULL becomes false. */
  orFalse(predicate: Sql): Sql;
  falseValue: Sql;
  trueValue: Sql;
  /**
   * Whole milliseconds between two canonical timestamp columns, as SQL text (column expressions
   * in): the range index writes the very expression the query compares (`range-index.ts`).
   */
  millisBetweenText(start: string, end: string): string;
  /** `LIMIT … OFFSET …`, where no limit means all rows. */
  limitOffset(limit: number | null | undefined, offset: number | null | undefined): Sql;
}

const NUMBER_PATTERN = "^\\s*-?(0|[1-9][0-9]{0,199})(\\.[0-9]+)?([eE][-+]?[0-9]{1,2})?\\s*$";

function sqlitePath(path: string[]): string {
  let out = "$";
  for (const segment of path) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (segment.includes('"')) throw new QueryError(`Field path segment ${JSON.stringify(segment)} may not contain '"'`);
    else out += `."${segment}"`;
  }
  return out;
}

const sqlite: TraceSql = {
  dialect: "sqlite",
  jsonText(doc, path) {
    const p = sqlitePath(path);
    return sql`(CASE json_type(${doc}, ${p}) WHEN 'text' THEN json_extract(${doc}, ${p}) WHEN 'null' THEN NULL ELSE (${doc} -> ${p}) END)`;
  },
  numberOf(text) {
    return sql`(CASE WHEN json_valid(${text}) THEN (CASE WHEN json_type(${text}) IN ('integer', 'real') THEN CAST(${text} AS REAL) END) END)`;
  },
  byteLength: (text) => sql`length(CAST(${text} AS BLOB))`,
  position: (needle, haystack) => sql`instr(${haystack}, ${needle})`,
  orFalse: (predicate) => sql`COALESCE(${predicate}, 0)`,
  falseValue: sql`0`,
  trueValue: sql`1`,
  millisBetweenText: (start, end) => `CAST(ROUND((julianday(${end}) - julianday(${start})) * 86400000) AS INTEGER)`,
  limitOffset: (limit, offset) => sql`LIMIT ${limit ?? -1} OFFSET ${offset ?? 0}`,
};

const postgres: TraceSql = {
  dialect: "postgres",
  jsonText: (doc, path) => sql`((CAST(${doc} AS json) #>> CAST(${path} AS text[])) COLLATE "C")`,
  numberOf: (text) => sql`(SELECT CASE WHEN n.t ~ ${NUMBER_PATTERN} THEN CAST(n.t AS double precision) END FROM (SELECT ${text} AS t) AS n)`,
  byteLength: (text) => sql`octet_length(${text})`,
  position: (needle, haystack) => sql`strpos(${haystack}, ${needle})`,
  orFalse: (predicate) => sql`COALESCE(${predicate}, FALSE)`,
  falseValue: sql`FALSE`,
  trueValue: sql`TRUE`,
  millisBetweenText: (start, end) => `CAST(FLOOR(EXTRACT(EPOCH FROM (CAST(${end} AS timestamptz) - CAST(${start} AS timestamptz))) * 1000) AS double precision)`,
  limitOffset: (limit, offset) => (limit === null || limit === undefined ? sql`OFFSET ${offset ?? 0}` : sql`LIMIT ${limit} OFFSET ${offset ?? 0}`),
};

export function traceSql(dialect: DialectName): TraceSql {
  return dialect === "postgres" ? postgres : sqlite;
}

/**
 * A text column for ORDER BY that sorts by code point on both dialects, as Python's `sorted` and
 * SQLite's default collation do; PostgreSQL would otherwise use the database's locale.
 */
export function byCodePoint(dialect: DialectName, column: string): RawBuilder<string> {
  return dialect === "postgres" ? sql<string>`${sql.ref(column)} collate "C"` : sql<string>`${sql.ref(column)}`;
}

/** Splits a long IN list so no statement exceeds the bound-parameter limits of either dialect. */
export function chunked<T>(items: readonly T[], size = 500): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * A statement written with `?` placeholders, numbered `$1, $2, ...` for PostgreSQL. The bulk write
 * paths build their SQL text directly (multi-row INSERTs, without an AST per value). The text never
 * contains a literal `?`.
 */
export function rawStatement(dialect: DialectName, text: string, parameters: unknown[]): CompiledQuery {
  if (dialect === "postgres") {
    let index = 0;
    text = text.replace(/\?/g, () => `$${++index}`);
  }
  return CompiledQuery.raw(text, parameters);
}

/** `(?, ?, ?), (?, ?, ?)` for `rows` rows of `columns` values. */
export function valuesPlaceholders(rows: number, columns: number): string {
  const row = `(${new Array(columns).fill("?").join(", ")})`;
  return new Array(rows).fill(row).join(", ");
}

/** How many rows of `columns` values one statement may carry (SQLite allows 32766 parameters). */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.floor(30_000 / columns));
}

/**
 * Splits `rows` into chunks whose sizes are powers of two (largest first, at most `max`), so bulk
 * inserts of any batch size reuse a handful of statement texts that the statement cache keeps.
 */
export function powerOfTwoChunks<T>(rows: T[], max: number): T[][] {
  const chunks: T[][] = [];
  let offset = 0;
  while (offset < rows.length) {
    let size = 1;
    while (size * 2 <= Math.min(max, rows.length - offset)) size *= 2;
    chunks.push(rows.slice(offset, offset + size));
    offset += size;
  }
  return chunks;
}

const MAX_ROWS_PER_STATEMENT = 256;
const insertTexts = new Map<string, string>();

/** The text of a multi-row INSERT, built once per shape. */
function insertText(dialect: DialectName, head: string, columns: number, rows: number, tail: string): string {
  const key = `${dialect}\u0000${head}\u0000${rows}\u0000${tail}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    text = rawStatement(dialect, `${head} VALUES ${valuesPlaceholders(rows, columns)} ${tail}`, []).sql;
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * `head VALUES (...), (...) tail` statements for `rows` (each a list of `columns` values), in chunks
 * of power-of-two sizes: any number of rows compiles to one of a few statement texts.
 */
export function bulkInsert(dialect: DialectName, head: string, columns: number, rows: unknown[][], tail: string): CompiledQuery[] {
  const max = Math.min(MAX_ROWS_PER_STATEMENT, rowsPerStatement(columns));
  return powerOfTwoChunks(rows, max).map((chunk) => {
    // A plain loop: Array.prototype.flat is several times slower on these arrays.
    const parameters: unknown[] = new Array(chunk.length * columns);
    let index = 0;
    for (const row of chunk) for (const value of row) parameters[index++] = value;
    return CompiledQuery.raw(insertText(dialect, head, columns, chunk.length, tail), parameters);
  });
}
