import type { ChatCompletionRequest } from "../completions/protocol.js";

/**
 * The token-level extension of the Responses and Messages surfaces: with `return_token_ids` (the
 * default for trained-model names, like chat's logprobs) a whole result carries the prompt's ids,
 * the sampled ids and their raw logprobs — what an RL trainer needs to train it token-exact.
 */

export function requestTokenMetadata(chat: ChatCompletionRequest): void {
  chat.logprobs = true;
  chat.return_token_ids = true;
  chat.return_tokens_as_token_ids = true;
}

/** The three fields, from a whole chat completion body run with `requestTokenMetadata`. */
export function tokenMetadataOf(completion: Record<string, unknown>): { prompt_token_ids: number[] | null; token_ids: number[] | null; logprobs: number[] | null } {
  const choice = (completion.choices as { token_ids: number[] | null; logprobs: { content: { logprob: number }[] } | null }[])[0];
  return {
    prompt_token_ids: (completion.prompt_token_ids as number[] | null) ?? null,
    token_ids: choice?.token_ids ?? null,
    logprobs: choice?.logprobs ? choice.logprobs.content.map((entry) => entry.logprob) : null,
  };
}
