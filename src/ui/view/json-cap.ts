/**
 * Caps for the JSON viewer, so that a 5 MB input renders at once: long strings show their start,
 * long arrays and objects their first entries, and nothing below a closed node is rendered.
 */

export const STRING_CAP = 2000;
export const ENTRY_CAP = 100;

export type JsonKind = "object" | "array" | "string" | "number" | "boolean" | "null";

export function kindOf(value: unknown): JsonKind {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  const type = typeof value;
  return type === "object" ? "object" : type === "string" ? "string" : type === "number" || type === "bigint" ? "number" : type === "boolean" ? "boolean" : "string";
}

/** The first `cap` characters of a string and how many were left out. */
export function capString(text: string, cap = STRING_CAP): { text: string; omitted: number } {
  return text.length <= cap ? { text, omitted: 0 } : { text: text.slice(0, cap), omitted: text.length - cap };
}

/** The first `cap` entries of an object or array (keys as strings) and how many more there are. */
export function entriesOf(value: unknown, cap = ENTRY_CAP): { entries: [string, unknown][]; more: number } {
  if (Array.isArray(value)) {
    return { entries: value.slice(0, cap).map((item, index) => [String(index), item]), more: Math.max(0, value.length - cap) };
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    return { entries: keys.slice(0, cap).map((key) => [key, (value as Record<string, unknown>)[key]]), more: Math.max(0, keys.length - cap) };
  }
  return { entries: [], more: 0 };
}

/** A one-line preview of a collapsed value: `{3 keys}`, `[10 items]`, or the scalar. */
export function preview(value: unknown): string {
  const kind = kindOf(value);
  if (kind === "array") return `[${(value as unknown[]).length} items]`;
  if (kind === "object") return `{${Object.keys(value as object).length} keys}`;
  if (kind === "string") {
    const { text, omitted } = capString(value as string, 80);
    return JSON.stringify(text) + (omitted > 0 ? "…" : "");
  }
  return String(value ?? "null");
}
