import { type RawBuilder, sql } from "kysely";
import type { DialectName } from "../../db.js";

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
