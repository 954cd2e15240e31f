/** Strings that are Weave refs (`docs/api/trace.md#refs`), found anywhere inside a value, in order, without repeats. */
export function extractRefs(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") {
    if (value.startsWith("weave:///")) found.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) extractRefs(item, found);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) extractRefs(item, found);
  }
  return found;
}
