/**
 * The logits processors of vLLM's sampler, each a small in-place transform of one sequence's
 * logits (`docs/api/chat.md#sampling-order` steps 3–6). The sampler calls them in vLLM's order.
 */

/**
 * A structured-output token mask in xgrammar's layout: bit (id & 31) of word (id >> 5) is set when
 * token `id` is allowed. Tokens past the end of the mask are not allowed.
 */
export type TokenBitmask = Int32Array | Uint32Array;

/** Sets -Infinity on every token the bitmask forbids. */
export function applyTokenBitmask(logits: Float32Array, length: number, mask: TokenBitmask): void {
  const words = Math.min(mask.length, Math.ceil(length / 32));
  for (let w = 0; w < words; w++) {
    const bits = mask[w]! | 0;
    if (bits === -1) continue; // all 32 allowed
    const base = w * 32;
    const end = Math.min(base + 32, length);
    for (let id = base; id < end; id++) if ((bits & (1 << (id - base))) === 0) logits[id] = -Infinity;
  }
  logits.fill(-Infinity, Math.min(words * 32, length), length);
}

/** allowed_token_ids: every other token becomes -Infinity. `allowed` is sorted and unique. */
export function applyAllowedTokens(logits: Float32Array, length: number, allowed: Int32Array, saved: Float32Array): void {
  let kept = 0;
  for (let i = 0; i < allowed.length; i++) {
    const id = allowed[i]!;
    if (id < length) saved[kept++] = logits[id]!;
  }
  logits.fill(-Infinity, 0, length);
  for (let i = 0; i < kept; i++) logits[allowed[i]!] = saved[i]!;
}

/** min_tokens: while too few tokens were generated, no stop id may be sampled. */
export function banTokens(logits: Float32Array, length: number, ids: readonly number[]): void {
  for (const id of ids) if (id >= 0 && id < length) logits[id] = -Infinity;
}

/** logit_bias: adds each (already clamped) bias to its token's logit. */
export function applyLogitBias(logits: Float32Array, length: number, bias: ReadonlyMap<number, number>): void {
  for (const [id, value] of bias) if (id >= 0 && id < length) logits[id] = logits[id]! + value;
}

/** What the penalties need to know about one sequence's tokens (kept incrementally by TokenHistory). */
export interface PenaltyState {
  /** Distinct tokens of prompt ∪ output: the repetition penalty's set. */
  readonly seenTokens: readonly number[];
  /** Distinct generated tokens, with their counts in `outputCounts`. */
  readonly outputTokens: readonly number[];
  readonly outputCounts: ReadonlyMap<number, number>;
}

/**
 * Repetition (÷r for positive logits, ×r otherwise, on prompt ∪ output tokens), then frequency
 * (−f·count) and presence (−p) on generated tokens only — vLLM's formulas and order. Work is
 * proportional to the distinct tokens seen, never to the vocabulary.
 */
export function applyPenalties(logits: Float32Array, length: number, state: PenaltyState, repetition: number, frequency: number, presence: number): void {
  if (repetition !== 1) {
    for (const id of state.seenTokens) {
      if (id >= length) continue;
      const v = logits[id]!;
      logits[id] = v > 0 ? v / repetition : v * repetition;
    }
  }
  if (frequency !== 0 || presence !== 0) {
    for (const id of state.outputTokens) {
      if (id >= length) continue;
      const count = state.outputCounts.get(id)!;
      logits[id] = logits[id]! - frequency * count - presence;
    }
  }
}
