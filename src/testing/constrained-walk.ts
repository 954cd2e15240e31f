import type { ConstraintMatcher } from "../engine/structured/matcher.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";

/** A small seeded PRNG (mulberry32): the same seed gives the same walk. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface WalkResult {
  /** Generated ids, the final stop token excluded. */
  tokens: number[];
  text: string;
  /** True when the grammar accepted a stop token; false when the length cap ended the walk. */
  finished: boolean;
}

export interface WalkOptions {
  seed: number;
  maxTokens: number;
  stopTokenIds: readonly number[];
  /** Added to every step's random logits, per token id (e.g. to make closing tokens likelier). */
  bias?: Float32Array;
}

/**
 * Plays a model with random logits through a matcher, the way the engine will: mask the logits,
 * sample, accept, until a stop token or the length cap. Every step also checks the mask's
 * invariants: at least one token allowed, ids the tokenizer lacks and non-stop special tokens never
 * allowed, and the sampled (allowed) token accepted.
 */
export async function randomWalk(matcher: ConstraintMatcher, tokenizer: Tokenizer, options: WalkOptions): Promise<WalkResult> {
  const random = seededRandom(options.seed);
  const stops = new Set(options.stopTokenIds);
  const tokens: number[] = [];
  const logits = new Float32Array(matcher.vocabSize);
  for (let step = 0; step < options.maxTokens; step++) {
    const mask = await matcher.nextTokenMask();
    for (let id = 0; id < logits.length; id++) {
      // Gumbel noise: the argmax of logits + noise is a sample from softmax(logits).
      logits[id] = -Math.log(-Math.log(random() || Number.MIN_VALUE)) + (options.bias?.[id] ?? 0);
    }
    mask.applyTo(logits);
    let best = -1;
    for (let id = 0; id < logits.length; id++) {
      const allowed = logits[id] !== Number.NEGATIVE_INFINITY;
      if (allowed !== mask.allows(id)) throw new Error(`step ${step}: applyTo and allows disagree on token ${id}`);
      if (allowed && id >= tokenizer.vocabSize) throw new Error(`step ${step}: padding id ${id} is allowed`);
      if (allowed && tokenizer.isSpecial(id) && !stops.has(id)) throw new Error(`step ${step}: special token ${id} is allowed`);
      if (allowed && (best < 0 || logits[id]! > logits[best]!)) best = id;
    }
    if (best < 0) throw new Error(`step ${step}: the grammar allows no token after ${JSON.stringify(tokenizer.decode(tokens))}`);
    if (!matcher.accept(best)) throw new Error(`step ${step}: the matcher refused token ${best}, which its mask allowed`);
    if (stops.has(best)) {
      if (!matcher.isTerminated) throw new Error(`step ${step}: a stop token was accepted but the matcher did not terminate`);
      return { tokens, text: decodeStrict(tokenizer, tokens), finished: true };
    }
    tokens.push(best);
  }
  return { tokens, text: tokenizer.decode(tokens), finished: false };
}

/** Decodes, failing on bytes that are not valid UTF-8 (a finished output must be whole characters). */
function decodeStrict(tokenizer: Tokenizer, tokens: number[]): string {
  const bytes = tokens.flatMap((id) => [...tokenizer.tokenBytes(id)]);
  return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
}

/** A bias that makes the tokens containing any of `chars`, and the stop tokens, `amount` likelier. */
export function biasTowards(tokenizer: Tokenizer, vocabSize: number, chars: string, amount: number, stopTokenIds: readonly number[]): Float32Array {
  const bias = new Float32Array(vocabSize);
  const wanted = new Set([...new TextEncoder().encode(chars)]);
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    if (tokenizer.isSpecial(id)) continue;
    if ([...tokenizer.tokenBytes(id)].some((byte) => wanted.has(byte))) bias[id] = amount;
  }
  for (const id of stopTokenIds) bias[id] = amount;
  return bias;
}

/** Whether a matcher takes `text` (fed byte by byte) followed by a stop token. Disposes the matcher. */
export function acceptsText(matcher: ConstraintMatcher, text: string, stopTokenId: number): boolean {
  try {
    for (const byte of new TextEncoder().encode(text)) if (!matcher.accept(byte)) return false;
    return matcher.accept(stopTokenId);
  } finally {
    matcher.dispose();
  }
}
