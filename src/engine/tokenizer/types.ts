/**
 * What the rest of the engine needs from a tokenizer. Implemented over `tokenizer.json` +
 * `tokenizer_config.json` (byte-level BPE); the sampler, detokenizer and grammar compiler depend
 * only on this interface.
 */
export interface Tokenizer {
  /** Number of token ids the tokenizer defines, added tokens included (the model's embedding may be larger). */
  readonly vocabSize: number;
  readonly bosTokenId: number | undefined;
  readonly eosTokenId: number | undefined;
  /**
   * The checkpoint directory this tokenizer was read from, when it was: another thread can load the
   * same tokenizer from there (long prompts are tokenized off the event loop that way).
   */
  readonly sourceDir?: string;
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean; spacesBetweenSpecialTokens?: boolean }): string;
  /** The exact bytes a token stands for (byte-level pieces decoded to bytes; special tokens as UTF-8 of their text). */
  tokenBytes(id: number): Uint8Array;
  /** The raw vocabulary string (e.g. `Ġhello`), or undefined for an id outside the vocabulary. */
  tokenString(id: number): string | undefined;
  /** The id of a vocabulary string or added token, e.g. `<|im_end|>`. */
  tokenId(token: string): number | undefined;
  isSpecial(id: number): boolean;
}
