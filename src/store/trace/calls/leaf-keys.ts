/**
 * Keys of the call leaf index: one number per scalar leaf of a call's inputs, attributes, output or
 * summary, derived from (project, column, path, value). The index only narrows which calls a query
 * must look at; the query's own condition still decides. So a key may be shared by unrelated leaves
 * (a hash collision, a key with a dot) at no cost but a wasted look-up, while every leaf that a
 * `$eq`/`$in` filter could match must have a key the filter's look-up asks for. The rules:
 *
 * - Objects are walked; arrays are not (paths with list indexes are never looked up).
 * - A string has a text key when it is at most MAX_TEXT_LENGTH long, and also a number key when it
 *   spells a number (a loose reading that accepts everything SQLite's or PostgreSQL's comparison does).
 * - A number has a number key; a boolean the text key of `true`/`false`; null has none.
 * - Number keys round to 12 significant digits, and look-ups ask for the rounding of the value
 *   slightly below and above too, so databases that read a numeral one unit in the last place
 *   differently still meet the key.
 * - A column with more than MAX_KEYS_PER_COLUMN keys (or nested deeper than MAX_DEPTH) gets an
 *   overflow key instead of the rest, and every look-up on that column asks for it as well.
 */

export const MAX_TEXT_LENGTH = 256;
export const MAX_KEYS_PER_COLUMN = 64;
const MAX_DEPTH = 16;
/** Literal numbers look up their neighbours within this relative distance. */
const NUMBER_TOLERANCE = 1e-14;
/** Magnitudes where a relative tolerance holds (no subnormal or overflowing reads). */
const MIN_MAGNITUDE = 1e-300;
const MAX_MAGNITUDE = 1e300;
const LOOSE_NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
/** Text the databases may store differently from JavaScript (lone surrogates, the replacement character). */
const UNSTABLE_TEXT = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\uFFFD/;

/**
 * A 53-bit hash (two 32-bit FNV-1a style lanes, mixed at the end), fed piece by piece so a walk
 * hashes each path prefix once. Keys are exact integers on both dialects.
 */
class KeyHash {
  a = 0;
  b = 0;

  start(projectId: string, column: string): void {
    this.a = 0x811c9dc5;
    this.b = 0x050c5d1f;
    this.feed(projectId);
    this.feedCode(0);
    this.feed(column);
  }

  feed(text: string): void {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
    }
    this.a = a;
    this.b = b;
  }

  feedCode(code: number): void {
    this.a = Math.imul(this.a ^ code, 0x01000193);
    this.b = Math.imul(this.b ^ code, 0x5bd1e995);
  }

  /** The key of the current path with a value of `kind` ("t" text, "n" number, "o" overflow). */
  key(kind: number, value: string): number {
    const a = this.a;
    const b = this.b;
    this.feedCode(1);
    this.feedCode(kind);
    this.feed(value);
    let x = this.a ^ (this.b >>> 15);
    x = Math.imul(x, 0x85ebca6b);
    let y = this.b ^ (x >>> 13);
    y = Math.imul(y, 0xc2b2ae35);
    x ^= y >>> 16;
    this.a = a;
    this.b = b;
    return (y >>> 11) * 0x100000000 + (x >>> 0);
  }
}

const TEXT = 0x74;
const NUMBER = 0x6e;
const OVERFLOW = 0x6f;

/** The text of a number rounded to 12 significant digits (integers that short are their own rounding). */
function roundedNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e11) return String(value);
  return String(Number(value.toPrecision(12)));
}

/** The number a string spells under the loosest reading of the dialects' checks, if any. */
function looseNumber(text: string): number | undefined {
  // Most strings are not numbers: their first character tells.
  const first = text.charCodeAt(0);
  if (!((first >= 48 && first <= 57) || first === 45 || first === 43 || first === 46 || first <= 32 || first === 160 || first > 0x1000)) return undefined;
  const trimmed = text.trim();
  if (trimmed.length === 0 || !LOOSE_NUMBER.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function pathHash(projectId: string, column: string, path: readonly string[]): KeyHash {
  const hash = new KeyHash();
  hash.start(projectId, column);
  for (const segment of path) {
    hash.feedCode(0);
    hash.feed(segment);
  }
  return hash;
}

export function overflowKey(projectId: string, column: string): number {
  return pathHash(projectId, column, []).key(OVERFLOW, "");
}

/** Walks one column value, collecting keys into `keys`; false once past the limits. */
function collect(node: unknown, hash: KeyHash, depth: number, keys: number[]): boolean {
  if (keys.length >= MAX_KEYS_PER_COLUMN) return false;
  if (typeof node === "string") {
    if (node.length <= MAX_TEXT_LENGTH) keys.push(hash.key(TEXT, node));
    const number = looseNumber(node);
    if (number !== undefined) keys.push(hash.key(NUMBER, roundedNumber(number)));
  } else if (typeof node === "number") {
    if (Number.isFinite(node)) keys.push(hash.key(NUMBER, roundedNumber(node)));
  } else if (typeof node === "boolean") {
    keys.push(hash.key(TEXT, node ? "true" : "false"));
  } else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
    if (depth >= MAX_DEPTH) return false;
    const a = hash.a;
    const b = hash.b;
    for (const key in node as Record<string, unknown>) {
      hash.feedCode(0);
      hash.feed(key);
      const fits = collect((node as Record<string, unknown>)[key], hash, depth + 1, keys);
      hash.a = a;
      hash.b = b;
      if (!fits) return false;
    }
  }
  return true;
}

/**
 * The keys of every scalar leaf of one stored column value, in document order; an overflow key
 * replaces what goes beyond the limits.
 */
export function leafKeys(projectId: string, column: string, value: unknown): number[] {
  const keys: number[] = [];
  const hash = new KeyHash();
  hash.start(projectId, column);
  const fits = collect(value, hash, 0, keys);
  if (!fits || keys.length > MAX_KEYS_PER_COLUMN) return [...keys.slice(0, MAX_KEYS_PER_COLUMN), overflowKey(projectId, column)];
  return keys;
}

/**
 * The keys a call must have (one of) when `column.path` equals `literal` under the query
 * language's comparison, or undefined when the index cannot answer for that literal.
 */
export function literalKeys(projectId: string, column: string, path: readonly string[], literal: unknown): number[] | undefined {
  if (path.some((segment) => /^-?\d+$/.test(segment))) return undefined;
  const hash = pathHash(projectId, column, path);
  const keys = new Set<number>([overflowKey(projectId, column)]);
  const addNumber = (number: number): boolean => {
    const magnitude = Math.abs(number);
    if (!Number.isFinite(number) || (number !== 0 && (magnitude < MIN_MAGNITUDE || magnitude > MAX_MAGNITUDE))) return false;
    for (const near of [number * (1 - NUMBER_TOLERANCE), number, number * (1 + NUMBER_TOLERANCE)]) keys.add(hash.key(NUMBER, roundedNumber(near)));
    return true;
  };
  if (typeof literal === "number") return addNumber(literal) ? [...keys] : undefined;
  if (typeof literal === "boolean") literal = literal ? "true" : "false";
  if (typeof literal !== "string") return undefined;
  // Longer text is not indexed, and `{`/`[` may be the text of an object or a list.
  if (literal.length > MAX_TEXT_LENGTH || literal.startsWith("{") || literal.startsWith("[") || UNSTABLE_TEXT.test(literal)) return undefined;
  keys.add(hash.key(TEXT, literal));
  // A number's text form equals this literal only if the literal spells that number.
  const number = looseNumber(literal);
  if (number !== undefined && !addNumber(number)) return undefined;
  return [...keys];
}
