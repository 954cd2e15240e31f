import { type RawBuilder, sql } from "kysely";
import type { DialectName } from "../db.js";
import { QueryError } from "./query/errors.js";

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
  /** Whole milliseconds between two canonical timestamp columns. */
  millisBetween(start: Sql, end: Sql): Sql;
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
  millisBetween: (start, end) => sql`CAST(ROUND((julianday(${end}) - julianday(${start})) * 86400000) AS INTEGER)`,
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
  millisBetween: (start, end) =>
    sql`CAST(FLOOR(EXTRACT(EPOCH FROM (CAST(${end} AS timestamptz) - CAST(${start} AS timestamptz))) * 1000) AS double precision)`,
  limitOffset: (limit, offset) => (limit === null || limit === undefined ? sql`OFFSET ${offset ?? 0}` : sql`LIMIT ${limit} OFFSET ${offset ?? 0}`),
};

export function traceSql(dialect: DialectName): TraceSql {
  return dialect === "postgres" ? postgres : sqlite;
}
