import type { SampledToken, TokenLogprob } from "../api.js";
import { banBadWords } from "./bad-words.js";
import { type DrawBuffers, drawToken } from "./draw.js";
import { clampLogprob, logSumExp, maxOf } from "./fast-math.js";
import { applyAllowedTokens, applyLogitBias, applyPenalties, applyTokenBitmask, banTokens, type TokenBitmask } from "./logits-processors.js";
import { Rng } from "./rng.js";
import { argmax, topKIndices } from "./select.js";
import type { SequenceState } from "./sequence.js";

/** Temperatures below this mean greedy decoding (vLLM's epsilon). */
export const GREEDY_TEMPERATURE = 1e-5;

/**
 * Picks the next token of a sequence from the model's logits, with vLLM's pipeline and order
 * (`docs/api/chat.md#sampling-order`): raw logprob snapshot (after the structured-output mask) → allowed_token_ids
 * → bad_words → min_tokens → logit_bias → repetition → frequency → presence → greedy argmax, or
 * temperature → min_p → top_k → top_p → categorical draw.
 *
 * One Sampler serves every sequence of an engine thread: it owns the vocabulary-sized scratch
 * buffers (so a step allocates nothing of vocabulary size) and the shared RNG of unseeded
 * requests. The caller's logits are never modified.
 */
export class Sampler {
  private readonly sharedRng: Rng;
  private work = new Float32Array(0);
  private buffers: DrawBuffers = { tokenWeights: new Float64Array(0), candidateIds: new Int32Array(0), candidateWeights: new Float64Array(0), values: new Float32Array(0) };

  constructor(sharedRng: Rng = Rng.fromEntropy()) {
    this.sharedRng = sharedRng;
  }

  /**
   * Samples one token for `sequence` (which the caller then `append`s). `logits` has one entry per
   * token id of the model's vocabulary; `mask` is the structured-output constraint of this step.
   */
  sample(sequence: SequenceState, logits: Float32Array, mask?: TokenBitmask): SampledToken {
    const length = logits.length;
    const work = this.workBuffer(length);
    work.set(logits);
    if (mask) applyTokenBitmask(work, length, mask);

    // Raw logprobs: log_softmax of the logits as the model (and the grammar) gave them. Only when
    // asked for: the normalizer is a pass of exp over the whole vocabulary.
    const requested = sequence.params.logprobs;
    const logNormalizer = requested === null ? Number.NaN : logSumExp(work, length, maxOf(work, length));
    const top = requested !== null && requested !== 0 ? topLogprobs(work, length, requested === -1 ? length : requested, logNormalizer) : undefined;

    this.processLogits(sequence, work, length);
    const { params } = sequence;
    let tokenId = params.temperature < GREEDY_TEMPERATURE ? argmax(work, length) : drawToken(work, length, params, sequence.rng ?? this.sharedRng, this.drawBuffers(length));
    if (tokenId < 0) tokenId = fallbackToken(logits, mask);

    const logprob = requested === null ? Number.NaN : clampLogprob(logits[tokenId]! - logNormalizer);
    const sampled: SampledToken = { tokenId, logprob };
    if (top) sampled.top = top;
    return sampled;
  }

  /** allowed_token_ids → bad_words → min_tokens → logit_bias → penalties, in place. */
  private processLogits(sequence: SequenceState, work: Float32Array, length: number): void {
    const { params, history } = sequence;
    if (sequence.allowedTokenIds) applyAllowedTokens(work, length, sequence.allowedTokenIds, this.drawBuffers(length).values);
    if (sequence.badWordsTokenIds.length > 0) banBadWords(work, length, sequence.badWordsTokenIds, history.outputTokenIds);
    if (history.outputLength < params.minTokens) banTokens(work, length, sequence.minTokensBannedIds);
    if (params.logitBias && params.logitBias.size > 0) applyLogitBias(work, length, params.logitBias);
    if (sequence.penaltiesActive) {
      applyPenalties(work, length, history, params.repetitionPenalty, params.frequencyPenalty, params.presencePenalty);
    }
  }

  private workBuffer(length: number): Float32Array {
    if (this.work.length < length) this.work = new Float32Array(length);
    return this.work.subarray(0, length);
  }

  private drawBuffers(length: number): DrawBuffers {
    if (this.buffers.tokenWeights.length < length) {
      this.buffers = {
        tokenWeights: new Float64Array(length),
        candidateIds: new Int32Array(length),
        candidateWeights: new Float64Array(length),
        values: new Float32Array(length),
      };
    }
    return this.buffers;
  }
}

/** The `count` most likely tokens of a logits row, best first, as clamped raw logprobs. */
export function topLogprobs(logits: Float32Array, length: number, count: number, logNormalizer: number): TokenLogprob[] {
  return topKIndices(logits, count, length).map((tokenId) => ({ tokenId, logprob: clampLogprob(logits[tokenId]! - logNormalizer) }));
}

/**
 * When the request's own rules leave no token at all (say allowed_token_ids holds only EOS and
 * min_tokens forbids it), vLLM would pick an arbitrary id; we take the model's most likely token
 * that the structured-output mask allows, so the output stays well-formed.
 */
function fallbackToken(logits: Float32Array, mask: TokenBitmask | undefined): number {
  const work = Float32Array.from(logits);
  if (mask) applyTokenBitmask(work, work.length, mask);
  const best = argmax(work);
  if (best < 0) throw new Error("no token can be sampled: the logits or the token mask exclude every token");
  return best;
}
