/**
 * The call list's count, bounded: the page asks `/calls/query_stats` to count at most COUNT_CAP
 * calls (its `limit`), so a filter that matches most of a million calls answers as fast as one
 * that matches few, and shows "1,000+ calls". The list then grows a page at a time as it is
 * scrolled past what is counted.
 */
export const COUNT_CAP = 1_000;

export interface CallCount {
  count: number;
  /** More calls match than were counted. */
  has_more?: boolean;
}

export function callCountLabel(counted: CallCount): string {
  return `${counted.count.toLocaleString("en-US")}${counted.has_more ? "+" : ""} calls`;
}

/**
 * How many rows the list has: the count when it is exact; past a capped count, every row loaded
 * so far plus one more page (scrolling to it loads it), until a page comes back short — the end.
 * `loaded` maps a page's number to how many rows it held.
 */
export function callListLength(counted: CallCount, loaded: ReadonlyMap<number, number>, pageSize: number): number {
  if (!counted.has_more) return counted.count;
  let length = counted.count;
  for (const [page, rows] of loaded) {
    if (rows < pageSize) return page * pageSize + rows;
    length = Math.max(length, (page + 2) * pageSize);
  }
  return length;
}

/** Substring search reads the trigram index, which needs at least three characters to look anything up. */
export const MIN_SEARCH_LENGTH = 3;

export function isSearchTooShort(text: string | undefined): boolean {
  const length = [...(text ?? "").trim()].length;
  return length > 0 && length < MIN_SEARCH_LENGTH;
}
