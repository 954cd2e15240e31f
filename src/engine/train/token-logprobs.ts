import type { PackedRow } from "./packing.js";

/**
 * The trainer's logprob of each token of one sampled turn (a Choice in a trajectory's
 * messages_and_choices), as the RL step recomputed it before updating the weights: what the
 * sampler's logprobs are compared against (`sampler_logprob_max_diff`). NaN where the turn was cut
 * off at the end of its packed row.
 */
export interface TurnTokenLogprobs {
  groupIndex: number;
  trajectoryIndex: number;
  /** The turn's index in the trajectory's messages_and_choices. */
  itemIndex: number;
  logprobs: Float64Array;
}

/**
 * The recomputed logprobs of a row's turns (prediction layout: index p scores token p + 1), for the
 * turns of each trajectory's own messages_and_choices (not additional histories or exchanges,
 * which the rollout browser does not show as turns).
 */
export function turnTokenLogprobs(row: PackedRow, recomputed: Float64Array): TurnTokenLogprobs[] {
  const out: TurnTokenLogprobs[] = [];
  for (const { result, from, rowStart, rowEnd } of row.placements ?? []) {
    if (result.historyIndex !== 0 || result.fromExchanges || !result.turns) continue;
    for (const turn of result.turns) {
      const logprobs = new Float64Array(turn.count).fill(Number.NaN);
      for (let k = 0; k < turn.count; k++) {
        const position = rowStart + (turn.start + k - from);
        // Token at `position` is scored at position - 1; the first row token has no prediction.
        if (position >= rowStart && position < rowEnd && position > 0) logprobs[k] = recomputed[position - 1]!;
      }
      out.push({ groupIndex: result.groupIndex, trajectoryIndex: result.trajectoryIndex, itemIndex: turn.itemIndex, logprobs });
    }
  }
  return out;
}
