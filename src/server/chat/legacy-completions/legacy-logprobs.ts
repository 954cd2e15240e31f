import type { PromptPositionLogprobs, SampledToken } from "../../../engine/api.js";
import type { LogprobFormatter } from "../pipeline/logprobs.js";

/**
 * The legacy completions' `logprobs` object (OpenAI's `text_completion` shape, as vLLM writes it):
 * parallel lists of token strings, their logprobs, per-token dicts of alternatives (the token itself
 * first, then the requested number of best alternatives) and each token's character offset in the
 * choice's text. Token strings come from the chat formatter, so `token_id:<id>` works here too.
 */
export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number> | null)[];
  text_offset: number[];
}

export function emptyLegacyLogprobs(): LegacyLogprobs {
  return { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
}

/** Appends sampled tokens; `offset` is where the first one starts in the choice's text. Returns the offset after them. */
export function appendSampled(out: LegacyLogprobs, formatter: LogprobFormatter, tokens: readonly SampledToken[], offset: number): number {
  let at = offset;
  for (const entry of formatter.entries(tokens)) {
    const top: Record<string, number> = { [entry.token]: entry.logprob };
    for (const alternative of entry.top_logprobs) if (!(alternative.token in top)) top[alternative.token] = alternative.logprob;
    out.tokens.push(entry.token);
    out.token_logprobs.push(entry.logprob);
    out.top_logprobs.push(top);
    out.text_offset.push(at);
    at += entry.token.length;
  }
  return at;
}

/**
 * Appends the prompt's tokens (echo): the first has no logprob (nothing precedes it), the others
 * their prompt logprobs with `count` alternatives. Returns the offset after them.
 */
export function appendPrompt(out: LegacyLogprobs, formatter: LogprobFormatter, promptTokenIds: readonly number[], positions: readonly (PromptPositionLogprobs | null)[] | null, count: number): number {
  let at = 0;
  promptTokenIds.forEach((tokenId, index) => {
    const position = positions?.[index] ?? null;
    if (!position) {
      const [entry] = formatter.entries([{ tokenId, logprob: Number.NaN }]);
      out.tokens.push(entry!.token);
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      out.text_offset.push(at);
      at += entry!.token.length;
      return;
    }
    const alternatives = count < 0 ? position.top : position.top.slice(0, count);
    at = appendSampled(out, formatter, [{ tokenId: position.actual.tokenId, logprob: position.actual.logprob, top: alternatives }], at);
  });
  return at;
}
