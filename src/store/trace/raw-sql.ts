import { CompiledQuery } from "kysely";
import type { DialectName } from "../db.js";

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
function powerOfTwoChunks<T>(rows: T[], max: number): T[][] {
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
