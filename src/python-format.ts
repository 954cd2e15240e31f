/**
 * Values written exactly as CPython writes them, in one place: Weave digests hash `json.dumps` output,
 * and vLLM's error texts and re-serialized tool arguments are Python's `str()`, `repr()` and
 * `json.dumps`, which clients compare byte for byte.
 */

/**
 * Weave computes digests over Python's `json.dumps` of what Python's `json.loads` produced, so the
 * difference between `1` and `1.0`, and every digit of a large integer, must survive the trip
 * through JavaScript. Numbers that a JS `number` represents faithfully stay plain numbers; the two
 * kinds it cannot tell apart are wrapped:
 * - `PyFloat`: a float whose value is integral (`1.0`, `1e20`, `-0.0`) or not finite (`NaN`,
 *   `Infinity`), which a plain number would turn into an int;
 * - `PyInt`: an integer beyond 2^53, which a double would round.
 * Both serialize through plain `JSON.stringify` as the nearest number (or null), so code that does
 * not care about the distinction keeps working.
 */
export class PyFloat {
  constructor(readonly value: number) {}

  toJSON(): number | null {
    return Number.isFinite(this.value) ? this.value : null;
  }
}

export class PyInt {
  constructor(readonly value: bigint) {}

  toJSON(): number {
    return Number(this.value);
  }
}

/**
 * Python's `repr(float)`: the shortest digits that round-trip (which `toExponential()` also yields),
 * in fixed notation for decimal exponents -4..15 and scientific notation (`1e+16`, `1e-05`) outside;
 * non-finite values as `json.dumps` writes them (`NaN`, `Infinity`), where `repr()` says `nan`, `inf`.
 */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "Infinity";
  if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
    const intLength = exponent + 1;
    if (digits.length <= intLength) return `${sign}${digits}${"0".repeat(intLength - digits.length)}.0`;
    return `${sign}${digits.slice(0, intLength)}.${digits.slice(intLength)}`;
  }
  const scientific = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const magnitude = Math.abs(exponent);
  return `${sign}${scientific}e${exponent < 0 ? "-" : "+"}${magnitude < 10 ? "0" : ""}${magnitude}`;
}

/**
 * Byte-exact clone of CPython's `json.dumps(value, sort_keys=..., ensure_ascii=...)`, by default as Python's
 * defaults (`docs/api/trace.md#digests`): separators `", "` and `": "`, `ensure_ascii=True` (every character
 * outside printable ASCII as a lowercase `\uXXXX` escape, astral characters as surrogate pairs), keys in
 * insertion order or sorted by code point, ints as exact decimals, floats as `repr` and bare
 * `NaN`/`Infinity`. Values are what `parseJsonLossless` produces (plain JSON plus PyFloat and PyInt);
 * properties whose value is undefined are left out, as JSON.stringify does.
 */
export function pythonJsonDumps(value: unknown, options: { sortKeys?: boolean; ensureAscii?: boolean } = {}): string {
  const parts: string[] = [];
  writeValue(value, { sortKeys: options.sortKeys ?? false, ensureAscii: options.ensureAscii ?? true }, parts);
  return parts.join("");
}

interface DumpsOptions {
  sortKeys: boolean;
  ensureAscii: boolean;
}

function writeValue(value: unknown, options: DumpsOptions, out: string[]): void {
  if (value === null || value === undefined) {
    out.push("null");
  } else if (typeof value === "string") {
    out.push(jsonString(value, options.ensureAscii));
  } else if (typeof value === "number") {
    out.push(Number.isInteger(value) ? pythonIntRepr(value) : pythonFloatRepr(value));
  } else if (typeof value === "boolean") {
    out.push(value ? "true" : "false");
  } else if (typeof value === "bigint") {
    out.push(value.toString());
  } else if (value instanceof PyFloat) {
    out.push(pythonFloatRepr(value.value));
  } else if (value instanceof PyInt) {
    out.push(value.value.toString());
  } else if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push("[]");
      return;
    }
    out.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(", ");
      writeValue(value[i], options, out);
    }
    out.push("]");
  } else if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => record[key] !== undefined);
    if (keys.length === 0) {
      out.push("{}");
      return;
    }
    if (options.sortKeys) keys.sort(compareByCodePoint);
    out.push("{");
    keys.forEach((key, index) => {
      if (index > 0) out.push(", ");
      out.push(jsonString(key, options.ensureAscii), ": ");
      writeValue(record[key], options, out);
    });
    out.push("}");
  } else {
    throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
}

function pythonIntRepr(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
}

/** With ensure_ascii=False Python escapes only `"`, `\\` and control characters, as JSON.stringify does. */
function jsonString(text: string, ensureAscii: boolean): string {
  return ensureAscii ? pythonJsonString(text) : JSON.stringify(text);
}

const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const SHORT_ESCAPES: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };

/** `json.encoder.py_encode_basestring_ascii`: works on UTF-16 code units, so astral characters come out as surrogate pairs. */
export function pythonJsonString(text: string): string {
  if (PLAIN_ASCII.test(text)) return `"${text}"`;
  let result = '"';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const short = SHORT_ESCAPES[code];
    if (short !== undefined) result += short;
    else if (code < 0x20 || code > 0x7e) result += `\\u${code.toString(16).padStart(4, "0")}`;
    else result += text[i];
  }
  return `${result}"`;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Python orders str keys by code point; JS compares UTF-16 code units, which differs only around surrogates. */
export function compareByCodePoint(a: string, b: string): number {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return (x.done ? 0 : 1) - (y.done ? 0 : 1);
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * Python's `str()` of a JSON value (`float`: numbers are floats, so `3` prints as `3.0`): a string is
 * itself, anything else its `repr()`.
 */
export function pythonStr(value: unknown, options: { float?: boolean } = {}): string {
  return typeof value === "string" ? value : pythonRepr(value, options);
}

/** Python's `repr()` of a JSON value (what `str()` prints for lists and dicts). */
export function pythonRepr(value: unknown, options: { float?: boolean } = {}): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (value instanceof PyFloat) return floatRepr(value.value);
  if (value instanceof PyInt) return value.value.toString();
  if (typeof value === "number") return options.float || !Number.isInteger(value) ? floatRepr(value) : String(value);
  if (typeof value === "string") return stringRepr(value);
  if (Array.isArray(value)) return `[${value.map((item) => pythonRepr(item, options)).join(", ")}]`;
  if (typeof value === "object")
    return `{${Object.entries(value)
      .map(([key, item]) => `${stringRepr(key)}: ${pythonRepr(item, options)}`)
      .join(", ")}}`;
  return String(value);
}

/** Python's repr of a set of strings (in the given order). */
export function pythonSetRepr(items: readonly string[]): string {
  return items.length === 0 ? "set()" : `{${items.map(stringRepr).join(", ")}}`;
}

/** `repr(float)`: as `json.dumps` for finite values; `nan`, `inf`, `-inf` otherwise. */
function floatRepr(value: number): string {
  if (Number.isFinite(value)) return pythonFloatRepr(value);
  return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

/** `repr(str)`: single quotes unless the text has one and no double quote; backslash escapes for controls. */
function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}
