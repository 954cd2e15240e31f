import { shuffleInPlace, type TokenizedResult } from "./tokenize-groups.js";

/**
 * Packing of tokenized results into fixed-length rows (`docs/api/training.md#packing`). Results are
 * appended in order; a row is closed when the next result would overflow it; a result whose group
 * prompt is already in the row contributes only its suffix (the row shares the prompt). Every token
 * carries its result's group id (prompt tokens: the prompt id), parent id (the prompt id) and
 * original position, which is all the attention rule of `attention.ts` needs.
 *
 * Layout: all arrays of a row have `sequenceLength` entries, indexed by position in the row; the
 * first `length` positions hold tokens, the rest is padding (token = padTokenId, group and parent
 * id -1, position 0, mask 0, logprob NaN, advantage and weight 0).
 */
export interface PackedRow {
  tokens: Int32Array;
  groupIds: Int32Array;
  parentIds: Int32Array;
  inputPos: Int32Array;
  assistantMask: Uint8Array;
  /** The sampler's logprob of each token (NaN where none). */
  logprobs: Float64Array;
  /** Normalised over the whole batch (`normalizeBatch`). */
  advantages: Float64Array;
  weights: Float64Array;
  /** Number of non-padding positions. */
  length: number;
  /** Which result each stretch of the row holds: its token `from` sits at `rowStart`. */
  placements?: Placement[];
}

export interface Placement {
  result: Pick<TokenizedResult, "groupIndex" | "trajectoryIndex" | "historyIndex" | "fromExchanges" | "turns">;
  from: number;
  rowStart: number;
  /** Row position after the last token placed (results may be cut at the row's end). */
  rowEnd: number;
}

export interface PackedBatch {
  sequenceLength: number;
  rows: PackedRow[];
}

export interface PackOptions {
  padTokenId: number;
  /** In [-1, 1] (docs/api/training.md#rl-config). */
  advantageBalance?: number;
  /** Cut results longer than a row (default) instead of dropping them. */
  truncateLongResults?: boolean;
  /** Uniform [0, 1) source for the row shuffle; tests pass a seeded one. */
  random?: () => number;
}

/**
 * ceil(longest result / 2048) · 2048, capped at the model's maximum sequence length
 * (docs/api/training.md#rl-config).
 */
export function autoPackedSequenceLength(longestResult: number, modelMaxSequenceLength = 32_768): number {
  return Math.min(Math.ceil(longestResult / 2048) * 2048, modelMaxSequenceLength);
}

interface Segment {
  result: TokenizedResult;
  /** Index of the first token of the result that goes into the row. */
  from: number;
  groupId: number;
}

export function packTokenizedResults(results: readonly TokenizedResult[], sequenceLength: number, options: PackOptions): PackedBatch {
  if (!Number.isInteger(sequenceLength) || sequenceLength < 1) throw new RangeError(`sequence length must be a positive integer, got ${sequenceLength}`);
  const truncate = options.truncateLongResults ?? true;
  let nextGroupId = Math.max(0, ...results.map((result) => result.promptId)) + 1;
  const plans: Segment[][] = [];
  let current: Segment[] = [];
  let used = 0;
  let promptsInRow = new Set<number>();
  for (const result of results) {
    if (result.tokenIds.length > sequenceLength && !truncate) continue;
    if (!result.assistantMask.slice(result.promptLength).some((bit) => bit === 1)) continue;
    const shares = result.promptLength > 0 && promptsInRow.has(result.promptId);
    const needed = shares ? result.tokenIds.length - result.promptLength : result.tokenIds.length;
    if (used + needed > sequenceLength && current.length > 0) {
      plans.push(current);
      current = [];
      used = 0;
      promptsInRow = new Set();
    }
    const from = promptsInRow.has(result.promptId) && result.promptLength > 0 ? result.promptLength : 0;
    current.push({ result, from, groupId: nextGroupId++ });
    used = Math.min(used + result.tokenIds.length - from, sequenceLength);
    if (result.promptLength > 0) promptsInRow.add(result.promptId);
  }
  if (current.length > 0) plans.push(current);
  shuffleInPlace(plans, options.random ?? Math.random);
  const batch = { sequenceLength, rows: plans.map((plan) => materializeRow(plan, sequenceLength, options.padTokenId)) };
  normalizeBatch(batch, options.advantageBalance ?? 0);
  return batch;
}

function materializeRow(plan: Segment[], sequenceLength: number, padTokenId: number): PackedRow {
  const row: PackedRow = {
    tokens: new Int32Array(sequenceLength).fill(padTokenId),
    groupIds: new Int32Array(sequenceLength).fill(-1),
    parentIds: new Int32Array(sequenceLength).fill(-1),
    inputPos: new Int32Array(sequenceLength),
    assistantMask: new Uint8Array(sequenceLength),
    logprobs: new Float64Array(sequenceLength).fill(NaN),
    advantages: new Float64Array(sequenceLength),
    weights: new Float64Array(sequenceLength),
    length: 0,
  };
  let at = 0;
  row.placements = [];
  for (const { result, from, groupId } of plan) {
    const rowStart = at;
    for (let i = from; i < result.tokenIds.length && at < sequenceLength; i++, at++) {
      row.tokens[at] = result.tokenIds[i]!;
      row.groupIds[at] = i < result.promptLength ? result.promptId : groupId;
      row.parentIds[at] = result.promptId;
      row.inputPos[at] = result.inputPos[i]!;
      row.assistantMask[at] = result.assistantMask[i]!;
      row.logprobs[at] = result.logprobs[i]!;
      row.advantages[at] = result.advantage;
      row.weights[at] = result.weight;
    }
    const { groupIndex, trajectoryIndex, historyIndex, fromExchanges, turns } = result;
    row.placements.push({ result: { groupIndex, trajectoryIndex, historyIndex, fromExchanges, turns }, from, rowStart, rowEnd: at });
  }
  row.length = at;
  return row;
}

/**
 * Over all rows of the job, on trainable tokens only (docs/api/training.md#packing): weights scaled to mean
 * 1; advantages balanced (b > 0 shrinks negative ones by 1 − b, b < 0 positive ones by 1 + b) and then
 * divided by the mean of |A|·w. Non-trainable positions get weight and advantage 0. Mutates the batch.
 */
export function normalizeBatch(batch: PackedBatch, advantageBalance: number): void {
  let count = 0;
  let weightSum = 0;
  for (const row of batch.rows) {
    for (let t = 0; t < batch.sequenceLength; t++) {
      if (row.assistantMask[t]) {
        count++;
        weightSum += row.weights[t]!;
      } else {
        row.weights[t] = 0;
        row.advantages[t] = 0;
      }
    }
  }
  if (count === 0) return;
  const meanWeight = weightSum / count;
  let scaleSum = 0;
  for (const row of batch.rows) {
    for (let t = 0; t < batch.sequenceLength; t++) {
      if (!row.assistantMask[t]) continue;
      row.weights[t] = row.weights[t]! / meanWeight;
      const advantage = row.advantages[t]!;
      if (advantageBalance > 0 && advantage < 0) row.advantages[t] = advantage * (1 - advantageBalance);
      else if (advantageBalance < 0 && advantage > 0) row.advantages[t] = advantage * (1 + advantageBalance);
      scaleSum += Math.abs(row.advantages[t]!) * row.weights[t]!;
    }
  }
  // All advantages balanced away (b = ±1 with one sign only): nothing to learn, leave them zero.
  if (scaleSum === 0) return;
  const meanScale = scaleSum / count;
  for (const row of batch.rows) {
    for (let t = 0; t < batch.sequenceLength; t++) {
      if (row.assistantMask[t]) row.advantages[t] = row.advantages[t]! / meanScale;
    }
  }
}

/** Whether any row has a trainable token (with sampler logprobs unless `allowWithoutLogprobs`). */
export function batchHasTrainableTokens(batch: PackedBatch, allowWithoutLogprobs: boolean): boolean {
  return batch.rows.some((row) => row.assistantMask.some((bit, t) => bit === 1 && (allowWithoutLogprobs || !Number.isNaN(row.logprobs[t]))));
}
