import type { PromptPositionLogprobs } from "../api.js";
import { clampLogprob, logSumExp } from "./fast-math.js";
import { topKIndices } from "./select.js";

/**
 * prompt_logprobs (`docs/api/chat.md#prompt-logprobs`): one entry per prompt token; entry 0 is null (nothing
 * predicts the first token), entry j scores prompt token j under the logits the model produced
 * after token j − 1. `rowAt(j)` returns those logits (the model's output at position j), for
 * j = 0 … P − 2. `topN` alternatives are added (0: only the actual token; -1: whole vocabulary).
 * Logprobs are raw (no sampling transform, no grammar mask), clamped to ≥ -9999.
 */
export function computePromptLogprobs(promptTokenIds: readonly number[], rowAt: (position: number) => Float32Array, topN: number): (PromptPositionLogprobs | null)[] {
  const result: (PromptPositionLogprobs | null)[] = promptTokenIds.length > 0 ? [null] : [];
  for (let j = 1; j < promptTokenIds.length; j++) result.push(promptPositionLogprobs(rowAt(j - 1), promptTokenIds[j]!, topN));
  return result;
}

/**
 * Logprobs at one prompt position. The actual token's rank is the number of tokens at least as
 * likely as it (vLLM's count of logprobs ≥ the token's), so 1 is the best; the top-N get ranks 1…N.
 */
export function promptPositionLogprobs(logits: Float32Array, actualTokenId: number, topN: number): PromptPositionLogprobs {
  const length = logits.length;
  const logNormalizer = logSumExp(logits, length);
  const actualLogit = logits[actualTokenId]!;
  let rank = 0;
  for (let i = 0; i < length; i++) if (logits[i]! >= actualLogit) rank++;
  const count = topN === -1 ? length : topN;
  const top = topKIndices(logits, count, length).map((tokenId, index) => ({
    tokenId,
    logprob: clampLogprob(logits[tokenId]! - logNormalizer),
    rank: index + 1,
  }));
  return { actual: { tokenId: actualTokenId, logprob: clampLogprob(actualLogit - logNormalizer), rank: Math.max(rank, 1) }, top };
}
