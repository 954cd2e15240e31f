import type { PackedRow } from "./packing.js";

/**
 * The attention rule of a packed row (`docs/api/training.md#packing`): query q may attend to key k iff
 * k ≤ q and k belongs to q's own group or to q's parent group — each completion sees its own tokens
 * and the prompt it shares with the rest of its group, never another completion. Positions for the
 * rotary embedding are `row.inputPos`, so a shared prompt keeps its original positions.
 */
export function mayAttend(row: Pick<PackedRow, "groupIds" | "parentIds">, query: number, key: number): boolean {
  if (key > query) return false;
  const keyGroup = row.groupIds[key];
  return keyGroup === row.groupIds[query] || keyGroup === row.parentIds[query];
}

/** A maximal run of positions with the same group id. */
export interface RowSegment {
  start: number;
  /** Exclusive. */
  end: number;
  groupId: number;
  parentId: number;
}

/**
 * The row as runs of one group each (a shared prompt, then completions, …; padding last). A
 * segment attends causally to itself and fully to the earlier segments whose group id is its
 * parent id — the structure a kernel can use instead of a dense mask.
 */
export function rowSegments(row: Pick<PackedRow, "groupIds" | "parentIds" | "length">): RowSegment[] {
  const segments: RowSegment[] = [];
  for (let t = 0; t < row.length; t++) {
    const last = segments[segments.length - 1];
    if (last && last.groupId === row.groupIds[t] && last.parentId === row.parentIds[t]) last.end = t + 1;
    else segments.push({ start: t, end: t + 1, groupId: row.groupIds[t]!, parentId: row.parentIds[t]! });
  }
  return segments;
}

/** The dense mask over the row's first `row.length` positions (entry q·length + k is 1 iff q may attend to k); quadratic in size, so for short rows — kernels should walk `rowSegments`. */
export function attentionMask(row: Pick<PackedRow, "groupIds" | "parentIds" | "length">): Uint8Array {
  const n = row.length;
  const mask = new Uint8Array(n * n);
  for (let q = 0; q < n; q++) {
    for (let k = 0; k <= q; k++) if (mayAttend(row, q, k)) mask[q * n + k] = 1;
  }
  return mask;
}
