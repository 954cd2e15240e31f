import { z } from "zod";
import type { ChatCompletionRequest, ChatCompletionResponse } from "../completions/protocol.js";

/**
 * The token-level extension of the Responses and Messages surfaces: with `return_token_ids` (the
 * default for trained-model names, like chat's logprobs) a whole result carries the prompt's ids,
 * the sampled ids and their raw logprobs — what an RL trainer needs to train it token-exact.
 */

/** The three fields as each surface's response schema documents them: present only when asked for. */
export const TokenMetadataFields = {
  prompt_token_ids: z.array(z.number().int()).nullable().optional().describe("Flywheel extension (`return_token_ids`): the prompt's token ids"),
  token_ids: z.array(z.number().int()).nullable().optional().describe("Flywheel extension (`return_token_ids`): the sampled token ids"),
  logprobs: z.array(z.number()).nullable().optional().describe("Flywheel extension (`return_token_ids`): each sampled token's raw logprob"),
};

export interface TokenMetadata {
  prompt_token_ids: number[] | null;
  token_ids: number[] | null;
  logprobs: number[] | null;
}

export function requestTokenMetadata(chat: ChatCompletionRequest): void {
  chat.logprobs = true;
  chat.return_token_ids = true;
  chat.return_tokens_as_token_ids = true;
}

/** The three fields, from a whole chat completion run with `requestTokenMetadata`. */
export function tokenMetadataOf(completion: ChatCompletionResponse): TokenMetadata {
  const choice = completion.choices[0];
  return {
    prompt_token_ids: completion.prompt_token_ids ?? null,
    token_ids: choice?.token_ids ?? null,
    logprobs: choice?.logprobs ? choice.logprobs.content.map((entry) => entry.logprob) : null,
  };
}
