import type { Tokenizer } from "../tokenizer/types.js";

/** How one token appears in `logprobs.content[].token` / `bytes` (`docs/api/chat.md#logprobs`). */
export interface TokenDisplay {
  /** The token decoded on its own: special tokens literally, a partial UTF-8 character as U+FFFD. */
  text: string;
  /** The token's true bytes (for a partial character these differ from the UTF-8 of `text`). */
  bytes: number[];
}

/**
 * Display strings of tokens for logprobs, memoized per token id (the same ids recur across steps,
 * choices and top-k lists).
 */
export class TokenDisplayCache {
  private readonly tokenizer: Tokenizer;
  private readonly cache = new Map<number, TokenDisplay>();
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });

  constructor(tokenizer: Tokenizer) {
    this.tokenizer = tokenizer;
  }

  get(tokenId: number): TokenDisplay {
    let display = this.cache.get(tokenId);
    if (!display) {
      const bytes = this.tokenizer.tokenBytes(tokenId);
      display = { text: this.decoder.decode(bytes), bytes: Array.from(bytes) };
      this.cache.set(tokenId, display);
    }
    return display;
  }
}
