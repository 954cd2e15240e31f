/**
 * A stored JSON value kept as its text, to be spliced into an answer unparsed. The trace store writes
 * `inputs`, `output` and `attributes` with JSON.stringify, so their text is exactly what parsing
 * and re-serializing it would give; a large query answer then skips both, and the garbage of
 * every call's object graph (D-TRACE-070).
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify of a flat row whose values may be `JsonText` (spliced as they are): the same
 * bytes as JSON.stringify of the row with those values parsed.
 */
export function stringifyWithJsonText(row: unknown): string {
  if (row === null || typeof row !== "object" || Array.isArray(row)) return JSON.stringify(row);
  let out = "{";
  for (const [key, value] of Object.entries(row)) {
    const text = value instanceof JsonText ? value.text : JSON.stringify(value);
    // As JSON.stringify does, leave out what has no JSON form (undefined, functions).
    if (text === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}
