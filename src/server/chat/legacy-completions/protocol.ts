import { z } from "zod";
import { laxBool, laxInt } from "../common/lax.js";
import { ChatCompletionReq } from "../completions/protocol.js";

/**
 * `POST /v1/completions` as vLLM's `CompletionRequest` takes it: a raw `prompt` (text, token ids,
 * or a list of either, each its own prompt), `echo`, `logprobs` as a count, `suffix` (accepted by
 * the schema, refused by the route as vLLM does), and every sampling and structured-output field of
 * chat completions with the same types and defaults. Fields that only make sense for messages
 * (tools, templates, reasoning) are not part of it.
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
