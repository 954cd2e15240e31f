/**
 * Numeric leaves of a call's inputs, attributes, output and summary, for the range index
 * (`range-index.ts`): each leaf that a range filter (`$gt`, `$gte`, `$lt`, `$lte` with a number)
 * can compare as a number gives (path key, value). Like the leaf index, this index only narrows
 * which calls a query reads; the query's own condition decides. So it must hold every leaf the
 * databases read as a number, while extra rows (a collision of path keys, a string the databases do
 * not read as a number) cost only a wasted candidate. The rules:
 *
 * - Objects are walked; arrays are not (paths with a list index are never looked up).
 * - A number is its value; a string is the number it spells under a reading looser than either
 *   dialect's (`numberOf` in `store/dialect.ts`); booleans and null are not numbers.
 * - Values beyond the double range (a string "1e999") are stored as the largest double of their
 *   sign, which every look-up's widened bounds still meet.
 * - A leaf whose numeral every parser reads exactly (an integer of at most 15 digits: a JSON number
 *   stored as `JSON.stringify` writes it, or a string that spells one) is `exact`: look-ups compare
 *   it with the bounds as written. Any other is looked up with widened bounds (`range-query.ts`).
 * - A column with more than MAX_NUMBERS_PER_COLUMN numeric leaves (or nested deeper than MAX_DEPTH)
 *   stores an overflow row instead of the rest, which every look-up on that column includes.
 */

export const MAX_NUMBERS_PER_COLUMN = 64;
const MAX_DEPTH = 16;
/** A reading of numerals looser than SQLite's JSON numbers and PostgreSQL's NUMBER_PATTERN. */
const LOOSE_NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
/** Integers every decimal parser reads exactly: below 10^15 (< 2^53), written as plain digits. */
const EXACT_INTEGER = /^-?\d{1,15}$/;
const EXACT_LIMIT = 1e15;

export interface NumberLeaf {
  pathKey: number;
  value: number;
  /** The databases read this leaf as exactly `value` (or not as a number at all). */
  exact: boolean;
}

/**
 * A 53-bit hash (two 32-bit FNV-1a lanes, mixed at the end) of a column and path. Segments are
 * separated by NUL, so a key containing a dot is its own segment, as in a query's path.
 */
function hash53(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  let x = a ^ (b >>> 15);
  x = Math.imul(x, 0x85ebca6b);
  let y = b ^ (x >>> 13);
  y = Math.imul(y, 0xc2b2ae35);
  x ^= y >>> 16;
  return (y >>> 11) * 0x100000000 + (x >>> 0);
}

/** The path key of `column.path` (an empty path: the column's value itself). */
export function numberPathKey(column: string, path: readonly string[]): number {
  return hash53(path.length === 0 ? column : `${column}\u0000${path.join("\u0000")}`);
}

/** The key of a column's overflow row (no path spells it: it ends in U+0001). */
export function numberOverflowKey(column: string): number {
  return hash53(`${column}\u0001`);
}

/**
 * The key of a call's latency row (`summary.weave.latency_ms`, computed from its start and end,
 * not a JSON leaf; no column path spells it: it starts with U+0002). Its rows are written by SQL
 * (`range-index.ts`), with the value the query's own expression gives.
 */
export function latencyPathKey(): number {
  return hash53("\u0002latency_ms");
}

/** Stored values stay finite: beyond the double range a value is the largest double of its sign. */
function finite(value: number): number {
  return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, value));
}

/** The number a string spells under the loose reading (beyond the double range: clamped), if any, and whether the numeral is read exactly. */
function spelled(text: string): { value: number; exact: boolean } | undefined {
  // Most strings are not numbers: their first character tells.
  const first = text.charCodeAt(0);
  if (!((first >= 48 && first <= 57) || first === 45 || first === 43 || first === 46 || first <= 32 || first === 160 || first > 0x1000)) return undefined;
  const trimmed = text.trim();
  if (trimmed.length === 0 || !LOOSE_NUMBER.test(trimmed)) return undefined;
  return { value: finite(Number(trimmed)), exact: EXACT_INTEGER.test(trimmed) };
}

function collect(node: unknown, column: string, path: string[], leaves: NumberLeaf[]): boolean {
  let value: number | undefined;
  let exact = false;
  // A non-finite number is stored as JSON null; an integer below 10^15 as its digits.
  if (typeof node === "number") {
    value = Number.isFinite(node) ? node : undefined;
    exact = Number.isInteger(node) && Math.abs(node) < EXACT_LIMIT;
  } else if (typeof node === "string") {
    const number = spelled(node);
    value = number?.value;
    exact = number?.exact ?? false;
  } else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
    if (path.length >= MAX_DEPTH) return false;
    for (const key in node as Record<string, unknown>) {
      path.push(key);
      const fits = collect((node as Record<string, unknown>)[key], column, path, leaves);
      path.pop();
      if (!fits) return false;
    }
    return true;
  }
  if (value === undefined) return true;
  if (leaves.length >= MAX_NUMBERS_PER_COLUMN) return false;
  leaves.push({ pathKey: numberPathKey(column, path), value, exact });
  return true;
}

/** The numeric leaves of one stored column value; past the limits, an overflow row replaces the rest. */
export function numberLeaves(column: string, value: unknown): NumberLeaf[] {
  const leaves: NumberLeaf[] = [];
  if (!collect(value, column, [], leaves)) leaves.push({ pathKey: numberOverflowKey(column), value: 0, exact: false });
  return leaves;
}
