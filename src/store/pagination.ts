/** The cursor envelope of the preview API (`docs/api/training.md#pagination`). */
export interface CursorPage<T extends { id: string }> {
  object: "list";
  data: T[];
  has_more: boolean;
  first_id: string;
  last_id: string;
}

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only proves that more exist, so
 * `has_more` is exact without a second query.
 */
export function toCursorPage<T extends { id: string }>(rows: T[], limit: number): CursorPage<T> {
  const data = rows.slice(0, limit);
  return {
    object: "list",
    data,
    has_more: rows.length > limit,
    first_id: data[0]?.id ?? "",
    last_id: data[data.length - 1]?.id ?? "",
  };
}
