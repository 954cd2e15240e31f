/**
 * The lengths of the top-level arrays named `keys` in a JSON object's text, found by one pass over
 * its characters without building any value: a route can refuse a body with 200,000 messages
 * before `JSON.parse` spends hundreds of milliseconds of the event loop building them. Only
 * well-formed text gives meaningful counts; the parse that follows reports malformed text. A key
 * written with escapes is not recognised (the check after the parse still applies), and a key
 * that occurs twice counts its longest array.
 */
export function topLevelArrayLengths(text: string, keys: readonly string[]): Map<string, number> {
  const lengths = new Map<string, number>();
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stringStart = 0;
  /** The last string closed at depth 1 (a key, when a colon follows). */
  let lastString = "";
  let key: string | undefined;
  /** The counted array open at depth 2, its commas so far and whether it holds anything. */
  let counting: string | undefined;
  let commas = 0;
  let nonEmpty = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) {
        inString = false;
        if (depth === 1) lastString = text.slice(stringStart, i);
      }
      continue;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    if (counting !== undefined && depth === 2 && c !== 93) nonEmpty = true;
    switch (c) {
      case 34:
        inString = true;
        stringStart = i + 1;
        break;
      case 58:
        if (depth === 1) key = lastString;
        break;
      case 44:
        if (counting !== undefined && depth === 2) commas++;
        break;
      case 91:
      case 123:
        depth++;
        if (c === 91 && depth === 2 && key !== undefined && keys.includes(key)) {
          counting = key;
          commas = 0;
          nonEmpty = false;
        }
        break;
      case 93:
      case 125:
        if (counting !== undefined && depth === 2) {
          lengths.set(counting, Math.max(lengths.get(counting) ?? 0, nonEmpty ? commas + 1 : 0));
          counting = undefined;
        }
        depth--;
        break;
    }
  }
  return lengths;
}
