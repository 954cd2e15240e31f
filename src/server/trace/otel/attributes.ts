import type { KeyValues } from "./types.js";

/**
 * OTel attribute handling after Weave's `opentelemetry/helpers.py` and `attributes.py`: dotted
 * keys become nested objects (JSON-looking strings are parsed), and the semantic-convention keys
 * of several tracing libraries are looked up in priority order.
 */

export class AttributePathConflictError extends Error {}

type Dict = Record<string, unknown>;
const isDict = (value: unknown): value is Dict => value !== null && typeof value === "object" && !Array.isArray(value);

/** JSON-safe values as Weave stores them: non-finite floats become the strings Python prints. */
export function toJsonSafe(value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
  if (Array.isArray(value)) return value.map(toJsonSafe);
  if (isDict(value)) return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, toJsonSafe(child)]));
  return value;
}

/**
 * `{"a.b": 1, "a.c": 2}` → `{a: {b: 1, c: 2}}`. A key that is both a value and a parent of other
 * keys (`gen_ai.prompt` = true and `gen_ai.prompt.content`) cannot be nested and is an error.
 */
export function expandAttributes(pairs: KeyValues): Dict {
  const result: Dict = {};
  for (const [flatKey, raw] of pairs) {
    let value: unknown = raw;
    if (typeof value === "string" && (value.startsWith("[") || value.startsWith("{"))) {
      try {
        value = JSON.parse(value);
      } catch {
        // Not JSON after all: keep the text.
      }
    }
    const parts = flatKey.split(".");
    let current = result;
    parts.slice(0, -1).forEach((part, index) => {
      if (!(part in current)) current[part] = {};
      const next = current[part];
      if (!isDict(next)) {
        throw new AttributePathConflictError(`Attribute '${flatKey}' conflicts with attribute '${parts.slice(0, index + 1).join(".")}', which holds a value; a key cannot be both a value and a parent of other keys`);
      }
      current = next;
    });
    const leaf = parts[parts.length - 1]!;
    if (isDict(current[leaf]) && !isDict(value)) {
      throw new AttributePathConflictError(`Attribute '${flatKey}' conflicts with nested attributes under '${flatKey}.'; a key cannot be both a value and a parent of other keys`);
    }
    current[leaf] = toJsonSafe(value);
  }
  return result;
}

/** A flat key if present, else the dotted path into nested objects (numeric parts index lists). */
export function getAttribute(data: Dict, key: string): unknown {
  if (key in data) return data[key];
  let current: unknown = data;
  for (const part of key.split(".")) {
    if (isDict(current) && part in current) current = current[part];
    else if (Array.isArray(current) && /^\d+$/.test(part)) current = current[Number(part)];
    else return undefined;
  }
  return current;
}

/** Python truthiness, which the key lookups use to skip empty values. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (typeof value === "number" && Number.isNaN(value)) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isDict(value)) return Object.keys(value).length > 0;
  return true;
}

/** Objects whose keys are exactly "0".."n-1" become lists, inside values (not the value itself's siblings). */
export function numericKeysToLists(value: unknown): unknown {
  if (!isDict(value)) return value;
  const converted: Dict = {};
  for (const [key, child] of Object.entries(value)) converted[key] = numericKeysToLists(child);
  const keys = Object.keys(converted);
  if (
    keys.length > 0 &&
    keys.every((key) => /^\d+$/.test(key)) &&
    keys
      .map(Number)
      .sort((a, b) => a - b)
      .every((n, index) => n === index)
  ) {
    return keys.map((_, index) => converted[String(index)]);
  }
  return converted;
}

type Handler = (value: unknown) => unknown;
type Key = string | [string, Handler];

/** The first truthy value among `keys`, under its own key (for inputs and outputs). */
export function firstOf(attributes: Dict, keys: Key[]): Dict {
  for (const entry of keys) {
    const [key, handler] = typeof entry === "string" ? [entry, undefined] : entry;
    const value = getAttribute(attributes, key);
    if (truthy(value)) return { [key]: numericKeysToLists(handler ? handler(value) : value) };
  }
  return {};
}

/** For each target name, the first truthy value among its keys. */
export function mapped(attributes: Dict, mapping: Record<string, Key[]>): Dict {
  const result: Dict = {};
  for (const [name, keys] of Object.entries(mapping)) {
    const found = firstOf(attributes, keys);
    const values = Object.values(found);
    if (values.length > 0) result[name] = values[0];
  }
  return result;
}

/** Python's int(value) where it succeeds; the value unchanged otherwise. */
export function tryParseInt(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^\s*[-+]?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  return value;
}
