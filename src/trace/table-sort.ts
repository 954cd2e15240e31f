import { TraceBadRequest } from "../store/trace/errors.js";
import { stringifyJsonLossless } from "./json/lossless.js";
import { compareByCodePoint, PyFloat, PyInt } from "../python-format.js";
import { isJsonObject } from "../store/trace/object-class.js";

/**
 * Sorting table rows by a dotted path into the row (`col.sub`), ordered like SQLite orders
 * `json_extract` results, which Weave's reference server relies on: missing and null first, then
 * numbers and booleans numerically, then strings (and nested objects as their JSON text) by code
 * point.
 */

export function validateSortField(field: string): void {
  if (!field?.trim()) throw new TraceBadRequest("Sort field cannot be empty");
  if (field.startsWith(".") || field.endsWith(".") || field.includes("..")) {
    throw new TraceBadRequest(`Invalid sort field '${field}': field names cannot start/end with dots or contain consecutive dots`);
  }
  if (field.split(".").some((part) => !part.trim())) throw new TraceBadRequest(`Invalid sort field '${field}': field path components cannot be empty`);
}

export type SortValue = { rank: 0 } | { rank: 1; number: number | bigint } | { rank: 2; text: string };

export function sortValueAt(row: unknown, field: string): SortValue {
  let current: unknown = row;
  for (const part of field.split(".")) {
    if (!isJsonObject(current) || !Object.hasOwn(current, part)) return { rank: 0 };
    current = current[part];
  }
  if (current === null || current === undefined) return { rank: 0 };
  if (typeof current === "number") return { rank: 1, number: current };
  if (typeof current === "boolean") return { rank: 1, number: current ? 1 : 0 };
  if (current instanceof PyFloat) return Number.isNaN(current.value) ? { rank: 0 } : { rank: 1, number: current.value };
  if (current instanceof PyInt) return { rank: 1, number: current.value };
  if (typeof current === "string") return { rank: 2, text: current };
  return { rank: 2, text: stringifyJsonLossless(current) };
}

export function compareSortValues(a: SortValue | undefined, b: SortValue | undefined): number {
  if (!a || !b) return 0;
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.rank === 1 && b.rank === 1) return a.number < b.number ? -1 : a.number > b.number ? 1 : 0;
  if (a.rank === 2 && b.rank === 2) return compareByCodePoint(a.text, b.text);
  return 0;
}
