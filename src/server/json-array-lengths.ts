/**
 * The lengths of the top-level arrays named `keys` in a JSON object's text, found by one pass over
 * its characters without building any value: a route can refuse a body with 200,000 messages
 * before `JSON.parse` spends hundreds of milliseconds of the event loop building them. Only
 * well-formed text gives meaningful counts; the parse that follows reports malformed text. A key
 * written with escapes is not recognised (the check after the parse still applies), and a key
 * that occurs twice counts its longest array.
 */
export function topLevelArrayLengths(text: string, keys: readonly string[]): Map<string, number> {
  const scan = new ArrayLengthScan(keys);
  scan.feed(text);
  return scan.lengths;
}

/** Keys longer than this are never among those counted, so their text is not kept. */
const MAX_KEY_CHARS = 256;

/**
 * The scan of `topLevelArrayLengths`, fed the text in pieces as it arrives (a request body, chunk
 * by chunk, while it is uploaded), so no piece of work grows with the body; `lengths` holds the
 * counts of the text fed so far (an array still open counts what it has closed).
 */
export class ArrayLengthScan {
  readonly lengths = new Map<string, number>();
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The text so far of a string open at depth 1 that began in an earlier piece; undefined past MAX_KEY_CHARS or after an escape. */
  private pending: string | undefined = "";
  /** The last string closed at depth 1 (a key, when a colon follows); undefined when it cannot be one of `keys`. */
  private lastString: string | undefined;
  private key: string | undefined;
  /** The counted array open at depth 2, its commas so far and whether it holds anything. */
  private counting: string | undefined;
  private commas = 0;
  private nonEmpty = false;

  constructor(private readonly keys: readonly string[]) {}

  /** Scans the next piece of the text. */
  feed(piece: string): void {
    const { keys, lengths } = this;
    let { depth, inString, escaped, pending, lastString, key, counting, commas, nonEmpty } = this;
    // Where the open depth-1 string began in this piece (0 when it began in an earlier one).
    let stringStart = 0;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) {
          escaped = true;
          pending = undefined;
        } else if (c === 34) {
          inString = false;
          if (depth === 1) lastString = pending === undefined || pending.length + i - stringStart > MAX_KEY_CHARS ? undefined : pending + piece.slice(stringStart, i);
        }
        continue;
      }
      if (c === 32 || c === 10 || c === 13 || c === 9) continue;
      if (counting !== undefined && depth === 2 && c !== 93) nonEmpty = true;
      switch (c) {
        case 34:
          inString = true;
          stringStart = i + 1;
          pending = "";
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
    // A depth-1 string still open keeps its text (up to MAX_KEY_CHARS) for the next piece.
    if (inString && depth === 1 && pending !== undefined) pending = pending.length + piece.length - stringStart > MAX_KEY_CHARS ? undefined : pending + piece.slice(stringStart);
    Object.assign(this, { depth, inString, escaped, pending, lastString, key, counting, commas, nonEmpty });
  }

  /** The count so far of an array still open, as if it closed here (commas seen + 1 when it holds anything). */
  openCount(): { key: string; count: number } | undefined {
    return this.counting === undefined ? undefined : { key: this.counting, count: this.nonEmpty ? this.commas + 1 : 0 };
  }
}
