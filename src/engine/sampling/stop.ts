import type { FinishReason } from "../api.js";
import type { RepetitionDetection } from "./params.js";

/** Why a sequence ended: finish_reason and stop_reason as the API reports them. */
export interface Finish {
  finishReason: FinishReason;
  /** A stop token id, the matched stop string, "repetition_detected", or null. */
  stopReason: number | string | null;
}

/** The token-level stop rules of one sequence, resolved once from its parameters. */
export interface StopRules {
  minTokens: number;
  maxTokens: number;
  /** Stops with stop_reason null; undefined under ignore_eos. */
  eosTokenId: number | undefined;
  /** Stop with stop_reason = the id: the request's stop_token_ids plus, unless ignore_eos, the model's extra EOS ids. */
  stopTokenIds: ReadonlySet<number>;
  /** Prompt + output may not exceed this many tokens. */
  maxModelLen: number;
  repetitionDetection: RepetitionDetection | null;
}

/**
 * vLLM's check after each generated token (`docs/api/chat.md#stopping`), in its order: nothing before
 * min_tokens, then EOS, stop token ids, length, repetition.
 */
export function checkStop(rules: StopRules, output: readonly number[], promptLength: number): Finish | null {
  if (output.length < rules.minTokens) return null;
  const last = output[output.length - 1]!;
  if (last === rules.eosTokenId) return { finishReason: "stop", stopReason: null };
  if (rules.stopTokenIds.has(last)) return { finishReason: "stop", stopReason: last };
  if (output.length >= rules.maxTokens || promptLength + output.length >= rules.maxModelLen) {
    return { finishReason: "length", stopReason: null };
  }
  if (rules.repetitionDetection && detectRepetition(output, rules.repetitionDetection)) {
    return { finishReason: "repetition", stopReason: "repetition_detected" };
  }
  return null;
}

/**
 * repetition_detection (docs/api/chat.md#repetition-detection): true when, for some pattern length L in
 * [max(1, min_pattern_size), max_pattern_size], the last L tokens occur `min_count` times back to
 * back at the end of the output. Lengths are tried upwards and the scan stops once L·min_count
 * exceeds the output. A max_pattern_size of 0 (or min_count < 2) disables it.
 */
export function detectRepetition(output: readonly number[], params: RepetitionDetection): boolean {
  const minSize = Math.max(1, params.minPatternSize);
  const { maxPatternSize, minCount } = params;
  if (maxPatternSize <= 0 || minCount < 2 || minSize > maxPatternSize) return false;
  const end = output.length;
  for (let size = minSize; size <= maxPatternSize; size++) {
    if (size * minCount > end) return false;
    if (endsWithRepeats(output, end, size, minCount)) return true;
  }
  return false;
}

function endsWithRepeats(output: readonly number[], end: number, size: number, count: number): boolean {
  for (let offset = 1; offset <= size; offset++) {
    const token = output[end - offset];
    for (let copy = 1; copy < count; copy++) if (output[end - copy * size - offset] !== token) return false;
  }
  return true;
}
