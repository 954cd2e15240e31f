import type { PromptPositionLogprobs, SampledToken } from "../../../engine/api.js";
import type { LogprobFormatter } from "../pipeline/logprobs.js";
import type { LegacyLogprobs } from "./protocol.js";

/**
 * Building the legacy completions' `logprobs` object (OpenAI's `text_completion` shape, as vLLM
 * writes it; its schema is `LegacyLogprobs` in the protocol): per token the dict of alternatives
 * holds the token itself first, then the requested number of best alternatives. Token strings come
 * from the chat formatter, so `token_id:<id>` works here too.
 */

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
