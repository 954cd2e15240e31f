import type { PromptPositionLogprobs, SampledToken, TokenLogprob } from "../../../engine/api.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";

/**
 * Logprobs in the response's shapes (`docs/api/chat.md#logprobs`): `choices[].logprobs.content` entries and
 * the top-level `prompt_logprobs`. `token` is the token decoded on its own (special tokens
 * literally), or `token_id:<id>` with return_tokens_as_token_ids; `bytes` are always the token's
 * true bytes, so byte-level pieces that split a character are exact (a decoded string would show
 * U+FFFD instead).
 */

export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

export interface LogprobEntry extends TopLogprob {
  top_logprobs: TopLogprob[];
}

export interface PromptLogprob {
  logprob: number;
  rank: number;
  decoded_token: string;
}

export interface LogprobOptions {
  asTokenIds: boolean;
  /** How many alternatives per position (the request's top_logprobs; -1 means all the engine returned). */
  topCount: number;
}

/** vLLM's floor for logprobs, which also stands in for -inf. */
const LOGPROB_FLOOR = -9999;

function clamp(logprob: number): number {
  return Number.isNaN(logprob) || logprob < LOGPROB_FLOOR ? LOGPROB_FLOOR : logprob;
}

export class LogprobFormatter {
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly options: LogprobOptions,
  ) {}

  private describe(token: TokenLogprob): TopLogprob {
    const text = this.options.asTokenIds ? `token_id:${token.tokenId}` : decodeOne(this.tokenizer, token.tokenId);
    return { token: text, logprob: clamp(token.logprob), bytes: tokenBytes(this.tokenizer, token.tokenId) };
  }

  entries(tokens: readonly SampledToken[]): LogprobEntry[] {
    return tokens.map((token) => {
      const alternatives = token.top ?? [];
      const top = this.options.topCount < 0 ? alternatives : alternatives.slice(0, this.options.topCount);
      return { ...this.describe(token), top_logprobs: top.map((alternative) => this.describe(alternative)) };
    });
  }

  /** `prompt_logprobs`: null for the first position, then token id (as a string) → logprob, rank and decoded text. */
  promptLogprobs(positions: readonly (PromptPositionLogprobs | null)[]): (Record<string, PromptLogprob> | null)[] {
    return positions.map((position) => {
      if (!position) return null;
      const out: Record<string, PromptLogprob> = {};
      for (const entry of [position.actual, ...position.top]) {
        const key = String(entry.tokenId);
        if (key in out) continue;
        out[key] = { logprob: clamp(entry.logprob), rank: entry.rank, decoded_token: decodeOne(this.tokenizer, entry.tokenId) };
      }
      return out;
    });
  }
}

function decodeOne(tokenizer: Tokenizer, id: number): string {
  try {
    return tokenizer.decode([id], { skipSpecialTokens: false });
  } catch {
    return "";
  }
}

function tokenBytes(tokenizer: Tokenizer, id: number): number[] | null {
  try {
    return [...tokenizer.tokenBytes(id)];
  } catch {
    // Ids past the tokenizer (the model's padding rows) have no text or bytes.
    return null;
  }
}
