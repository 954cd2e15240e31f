import { rowSegments } from "../attention.js";
import type { PackedRow } from "../packing.js";

/**
 * What the training forward runs over: the first `length` tokens of a row, each with its RoPE
 * position and the group/parent ids of the packed attention rule (`attention.ts`). A `PackedRow`
 * is one; `plainSequence` makes one of a single unpacked sequence.
 */
export type TrainingSequence = Pick<PackedRow, "tokens" | "inputPos" | "groupIds" | "parentIds" | "length">;

/** One sequence from position 0, attending causally to itself (an SFT row, a parity check). */
export function plainSequence(tokens: ArrayLike<number>): TrainingSequence {
  const length = tokens.length;
  return {
    tokens: Int32Array.from(tokens),
    inputPos: Int32Array.from({ length }, (_, i) => i),
    groupIds: new Int32Array(length),
    parentIds: new Int32Array(length),
    length,
  };
}

/** A range of row positions, end exclusive. */
export interface PositionRange {
  start: number;
  end: number;
}

/**
 * A run of queries (one segment of the row) with the keys it sees: every position of its
 * `context` ranges (earlier segments of its own or its parent group, in row order), then its own
 * positions causally. This is the layout `Kernels.attention` takes with start = contextLength.
 */
export interface AttentionSpan extends PositionRange {
  context: PositionRange[];
  contextLength: number;
}

export function attentionSpans(sequence: TrainingSequence): AttentionSpan[] {
  const segments = rowSegments(sequence);
  return segments.map((segment, index) => {
    const context = segments
      .slice(0, index)
      .filter((earlier) => earlier.groupId === segment.groupId || earlier.groupId === segment.parentId)
      .map(({ start, end }) => ({ start, end }));
    return { start: segment.start, end: segment.end, context, contextLength: context.reduce((sum, range) => sum + range.end - range.start, 0) };
  });
}
