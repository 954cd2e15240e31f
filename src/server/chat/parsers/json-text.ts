/** Small helpers for reading JSON that a model is still writing. */

/** How many trailing characters of `text` are a proper prefix of `tag` (text that might become the tag). */
export function partialTagOverlap(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/**
 * The JSON object or array starting at `text[start]`, up to its matching close (strings and
 * escapes respected); the rest of the text when it is not closed yet.
 */
export function balancedValue(text: string, start: number): { value: string; complete: boolean } {
  const open = text[start];
  const close = open === "{" ? "}" : "]";
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === open) depth++;
    else if (char === close && --depth === 0) return { value: text.slice(start, i + 1), complete: true };
  }
  return { value: text.slice(start), complete: false };
}

/** The objects of a JSON array being written (`[{...}, {...`), each with whether it is closed. */
export function arrayElements(text: string): { value: string; complete: boolean }[] {
  const elements: { value: string; complete: boolean }[] = [];
  let position = text.indexOf("[");
  if (position < 0) return elements;
  position++;
  while (position < text.length) {
    const next = text.indexOf("{", position);
    if (next < 0) break;
    const element = balancedValue(text, next);
    elements.push(element);
    if (!element.complete) break;
    position = next + element.value.length;
  }
  return elements;
}

/** The complete string value of `"key": "..."` in a partial JSON object, once its closing quote arrived. */
export function completeStringField(json: string, key: string): string | undefined {
  const match = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(json);
  if (!match) return undefined;
  try {
    return JSON.parse(`"${match[1]}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * The raw text of the object/array value of `"key":` in a partial JSON object, as far as it is
 * written. Scalars are returned only when the object is complete (they cannot be streamed safely).
 */
export function rawObjectField(json: string, key: string): { value: string; complete: boolean } | undefined {
  const match = new RegExp(`"${key}"\\s*:\\s*`).exec(json);
  if (!match) return undefined;
  const start = match.index + match[0].length;
  if (start >= json.length) return undefined;
  if (json[start] === "{" || json[start] === "[") return balancedValue(json, start);
  return undefined;
}
