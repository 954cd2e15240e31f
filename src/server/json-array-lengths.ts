/**
 * The lengths of the top-level arrays named `keys` in a JSON object's text, found by one pass over
 * its characters without building any value: a route can refuse a body with 200,000 messages
 * before `JSON.parse` spends hundreds of milliseconds of the event loop building them. Only
 * well-formed text gives meaningful counts; the parse that follows reports malformed text. A key
 * written with escapes is not recognised (the check after the parse still applies), and a key
 * that occurs twice counts its longest array.
 */
export function topLevelArrayLengths(text: string, keys: readonly string[]): Map<string, number> {
  const scan = new ArrayLengthScan(text, keys);
  scan.advance(text.length);
  return scan.lengths;
}

/** Characters scanned per turn of the event loop by `topLevelArrayLengthsInTurns`. */
const CHARS_PER_TURN = 256 * 1024;

/**
 * `topLevelArrayLengths`, a slice of the text per turn of the event loop: scanning megabytes
 * takes tens of milliseconds on a busy machine, and nothing else should wait for it.
 */
export async function topLevelArrayLengthsInTurns(text: string, keys: readonly string[]): Promise<Map<string, number>> {
  const scan = new ArrayLengthScan(text, keys);
  for (let end = CHARS_PER_TURN; ; end += CHARS_PER_TURN) {
    scan.advance(Math.min(end, text.length));
    if (end >= text.length) return scan.lengths;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The scan's state between slices. */
class ArrayLengthScan {
  readonly lengths = new Map<string, number>();
  private i = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private stringStart = 0;
  /** The last string closed at depth 1 (a key, when a colon follows). */
  private lastString = "";
  private key: string | undefined;
  /** The counted array open at depth 2, its commas so far and whether it holds anything. */
  private counting: string | undefined;
  private commas = 0;
  private nonEmpty = false;

  constructor(
    private readonly text: string,
    private readonly keys: readonly string[],
  ) {}

  /** Scans up to character `end`. */
  advance(end: number): void {
    const { text, keys, lengths } = this;
    let { i, depth, inString, escaped, stringStart, lastString, key, counting, commas, nonEmpty } = this;
    for (; i < end; i++) {
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
    Object.assign(this, { i, depth, inString, escaped, stringStart, lastString, key, counting, commas, nonEmpty });
  }
}
