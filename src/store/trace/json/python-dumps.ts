import { PyFloat, PyInt, pythonFloatRepr } from "./lossless.js";

/**
 * Byte-exact clone of CPython's `json.dumps(value, sort_keys=...)` with its defaults
 * (`docs/api/trace.md#digests`): separators `", "` and `": "`, `ensure_ascii=True` (every character outside
 * printable ASCII as a lowercase `\uXXXX` escape, astral characters as surrogate pairs), keys sorted
 * by code point, ints as exact decimals, floats as `repr` and bare `NaN`/`Infinity`.
 * Values are what `parseJsonLossless` produces (plain JSON plus PyFloat and PyInt); properties whose
 * value is undefined are left out, as JSON.stringify does.
 */
export function pythonJsonDumps(value: unknown, options: { sortKeys: boolean }): string {
  const parts: string[] = [];
  writeValue(value, options.sortKeys, parts);
  return parts.join("");
}

function writeValue(value: unknown, sortKeys: boolean, out: string[]): void {
  if (value === null || value === undefined) {
    out.push("null");
  } else if (typeof value === "string") {
    out.push(pythonJsonString(value));
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
      writeValue(value[i], sortKeys, out);
    }
    out.push("]");
  } else if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => record[key] !== undefined);
    if (keys.length === 0) {
      out.push("{}");
      return;
    }
    if (sortKeys) keys.sort(compareByCodePoint);
    out.push("{");
    keys.forEach((key, index) => {
      if (index > 0) out.push(", ");
      out.push(pythonJsonString(key), ": ");
      writeValue(record[key], sortKeys, out);
    });
    out.push("}");
  } else {
    throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
}

function pythonIntRepr(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
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
