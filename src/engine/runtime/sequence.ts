import type { KvCache } from "../model/kv-cache.js";

/**
 * One token sequence the model runs (a prompt before it forks, a choice, a beam) and its KV cache.
 * `tokens` are all the tokens known so far; the cache holds the first `computed` of them. Whatever
 * is not computed yet goes through the model in the coming steps: a whole prompt in chunks, one
 * freshly sampled token, or everything again after the sequence was preempted (cache dropped).
 * When all tokens are computed, the last forward pass gave the logits of the next token.
 */
export class Sequence {
  cache: KvCache | null = null;

  constructor(readonly tokens: number[]) {}

  get computed(): number {
    return this.cache?.length ?? 0;
  }

  /** Tokens still to run through the model. */
  get pending(): number {
    return this.tokens.length - this.computed;
  }

  /** Forgets the KV cache (preemption, or the end of the sequence); returns it. */
  release(): KvCache | null {
    const cache = this.cache;
    this.cache = null;
    return cache;
  }
}
