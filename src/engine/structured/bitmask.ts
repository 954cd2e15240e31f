/**
 * The tokens a grammar allows at one step, as xgrammar computes them: bit `id & 31` of word
 * `id >> 5` is set when token `id` is allowed. Ids at or beyond `vocabSize` are never allowed
 * (xgrammar leaves the unused bits of the last word set).
 */
export class TokenBitmask {
  constructor(
    readonly words: Int32Array,
    /** The width of the model's logits this mask was computed for. */
    readonly vocabSize: number,
  ) {
    if (words.length * 32 < vocabSize) throw new RangeError(`a bitmask of ${words.length} words cannot cover ${vocabSize} tokens`);
  }

  allows(tokenId: number): boolean {
    if (!Number.isInteger(tokenId) || tokenId < 0 || tokenId >= this.vocabSize) return false;
    return (this.words[tokenId >>> 5]! & (1 << (tokenId & 31))) !== 0;
  }

  /**
   * Sets the logit of every token the grammar disallows to -Infinity, in place; a logits row wider
   * than the mask's vocabulary has its extra entries disallowed too. Whole words of 32 allowed
   * tokens are skipped, so a mostly-open mask costs little.
   */
  applyTo(logits: Float32Array): void {
    const covered = Math.min(logits.length, this.vocabSize);
    for (let word = 0; word * 32 < covered; word++) {
      const bits = this.words[word]!;
      const base = word * 32;
      const end = Math.min(base + 32, covered);
      if (bits === -1 && end === base + 32) continue;
      if (bits === 0) {
        logits.fill(Number.NEGATIVE_INFINITY, base, end);
        continue;
      }
      for (let id = base; id < end; id++) if ((bits & (1 << (id - base))) === 0) logits[id] = Number.NEGATIVE_INFINITY;
    }
    if (logits.length > covered) logits.fill(Number.NEGATIVE_INFINITY, covered);
  }

  /** Keeps only the tokens `other` (same layout) also allows, in place. */
  intersect(other: Int32Array): void {
    const words = this.words;
    for (let i = 0; i < words.length; i++) words[i] = words[i]! & (other[i] ?? 0);
  }

  /** True when no token at all is allowed. */
  get isEmpty(): boolean {
    for (let id = 0; id < this.vocabSize; id++) if (this.allows(id)) return false;
    return true;
  }

  /** The allowed ids in increasing order. */
  allowedIds(): number[] {
    const ids: number[] = [];
    for (let id = 0; id < this.vocabSize; id++) if (this.allows(id)) ids.push(id);
    return ids;
  }
}
