import { CompiledQuery } from "kysely";
import type { DialectName } from "../db.js";

/**
 * A statement written with `?` placeholders, numbered `$1, $2, ...` for PostgreSQL. The bulk write
 * paths build their SQL text directly: one multi-row INSERT per thousand calls, without an AST per
 * value. The text never contains a literal `?`.
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
