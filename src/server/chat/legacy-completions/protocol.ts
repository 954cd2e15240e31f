import { z } from "zod";
import { laxBool, laxInt } from "../common/lax.js";
import { ChatCompletionReq, ChatCompletionUsage, PromptLogprobs, StopReason, TokenId } from "../completions/protocol.js";

/**
 * `POST /v1/completions` as vLLM's `CompletionRequest` takes it: a raw `prompt` (text, token ids,
 * or a list of either, each its own prompt), `echo`, `logprobs` as a count, `suffix` (accepted by
 * the schema, refused by the route as vLLM does), and every sampling and structured-output field of
 * chat completions with the same types and defaults. Fields that only make sense for messages
 * (tools, templates, reasoning) are not part of it. The `text_completion` response and its stream
 * chunks follow the request's types below.
 */

const TokenIds = z.array(laxInt()).min(1);

export const CompletionPrompt = z.union([z.string(), z.array(z.string()).min(1), TokenIds, z.array(TokenIds).min(1)]);

const CHAT_ONLY = {
  messages: true,
  logprobs: true,
  top_logprobs: true,
  max_tokens: true,
  max_completion_tokens: true,
  tools: true,
  tool_choice: true,
  reasoning_effort: true,
  include_reasoning: true,
  parallel_tool_calls: true,
  echo: true,
  add_generation_prompt: true,
  continue_final_message: true,
  add_special_tokens: true,
  documents: true,
  chat_template: true,
  chat_template_kwargs: true,
  mm_processor_kwargs: true,
} as const;

export const CompletionReq = ChatCompletionReq.omit(CHAT_ONLY).extend({
  prompt: CompletionPrompt.describe("Text, token ids, or a list of either (one prompt each)"),
  logprobs: laxInt().nullish().describe("How many top alternatives per token; default none (0 for trained-model names)"),
  max_tokens: laxInt().nullish().default(16),
  echo: laxBool().default(false).describe("Prepend the prompt to each choice's text (and its logprobs)"),
  suffix: z.string().nullish().describe("Not supported (refused with 400, as vLLM does)"),
  best_of: laxInt().nullish(),
  add_special_tokens: laxBool().default(true).describe("Add the tokenizer's BOS/EOS to text prompts"),
  prompt_embeds: z.unknown().optional(),
});

export type CompletionRequest = z.output<typeof CompletionReq>;

// The `text_completion` response and its stream chunks (`docs/api/chat.md#legacy-completions`):
// what the handler returns and what /openapi.json documents for the 200.

/**
 * OpenAI's `text_completion` logprobs: parallel lists of token strings, their logprobs (null for a
 * prompt's first token, which nothing precedes), per token its alternatives by token string, and
 * each token's character offset in the choice's text.
 */
export const LegacyLogprobs = z.object({
  tokens: z.array(z.string()),
  token_logprobs: z.array(z.number().nullable()),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()),
  text_offset: z.array(z.number().int()),
});
export type LegacyLogprobs = z.output<typeof LegacyLogprobs>;

const CompletionChoice = z.object({
  index: z.number().int().describe("Choice i of prompt p is at p * n + i"),
  text: z.string(),
  logprobs: LegacyLogprobs.nullable(),
  finish_reason: z.string(),
  stop_reason: StopReason,
  token_ids: z.array(TokenId).nullable(),
  prompt_logprobs: PromptLogprobs,
  prompt_token_ids: z.array(TokenId).nullable(),
});
export type CompletionChoice = z.output<typeof CompletionChoice>;

export const CompletionRes = z.object({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(CompletionChoice),
  service_tier: z.null(),
  system_fingerprint: z.string(),
  usage: ChatCompletionUsage,
  kv_transfer_params: z.null(),
});
export type CompletionResponse = z.output<typeof CompletionRes>;

const CompletionChunkChoice = z.object({
  index: z.number().int(),
  text: z.string(),
  logprobs: LegacyLogprobs.nullable(),
  finish_reason: z.string().nullable(),
  stop_reason: StopReason,
  /** With `return_token_ids`: the ids of this chunk's tokens (the prompt's on the echo chunk). */
  token_ids: z.array(TokenId).optional(),
});
export type CompletionChunkChoice = z.output<typeof CompletionChunkChoice>;

/** One `data:` event of a streamed completion; the last, with `stream_options.include_usage`, has no choices and the usage. */
export const CompletionChunk = z.object({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(CompletionChunkChoice),
  usage: ChatCompletionUsage.optional(),
});
export type CompletionChunk = z.output<typeof CompletionChunk>;
