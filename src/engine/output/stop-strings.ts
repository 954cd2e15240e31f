/** Where a stop string matched and how much text survives it. */
export interface StopStringMatch {
  stop: string;
  /** Length to cut the text to (at the match, or right after it with include_stop_str_in_output). */
  cutAt: number;
}

/**
 * Looks for a stop string that ends inside the last `newChars` characters of `text` (older text
 * was searched before). The first stop string in list order that occurs wins, not the earliest
 * position — vLLM's rule (`docs/api/chat.md#stopping`).
 */
export function findStopString(text: string, newChars: number, stops: readonly string[], includeInOutput: boolean): StopStringMatch | null {
  if (newChars <= 0) return null;
  for (const stop of stops) {
    if (stop.length === 0) continue;
    const index = text.indexOf(stop, Math.max(0, text.length - newChars - stop.length + 1));
    if (index < 0) continue;
    return { stop, cutAt: includeInOutput ? index + stop.length : index };
  }
  return null;
}

/**
 * How many trailing characters (UTF-16 code units) streaming must hold back so that a partial stop
 * string is never sent: the longest stop string minus one, or nothing when stop strings are shown.
 */
export function stopHoldBack(stops: readonly string[], includeInOutput: boolean): number {
  if (includeInOutput || stops.length === 0) return 0;
  return Math.max(...stops.map((stop) => stop.length)) - 1;
}
