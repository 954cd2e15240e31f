import { z } from "zod";
import { laxBool, laxInt } from "../common/lax.js";
import { ChatMessage, ToolDefinition } from "../completions/protocol.js";

/**
 * vLLM's `/tokenize` and `/detokenize` bodies: a raw `prompt` (tokenized as is) or chat `messages`
 * (rendered through the model's chat template first, as chat completions render them), and a
 * list of token ids to decode.
 */

const ModelField = z.string().nullish().describe("A served base model id or a trained-model name; may be left out when one model is served");

export const TokenizePromptReq = z.object({
  model: ModelField,
  prompt: z.string(),
  add_special_tokens: laxBool().default(true),
  return_token_strs: laxBool().nullish(),
});

export const TokenizeChatReq = z.object({
  model: ModelField,
  messages: z.array(ChatMessage).min(1),
  add_generation_prompt: laxBool().default(true),
  continue_final_message: laxBool().default(false),
  add_special_tokens: laxBool().default(false),
  return_token_strs: laxBool().nullish(),
  chat_template: z.string().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  tools: z.array(ToolDefinition).nullish(),
});

/** A body with `messages` is the chat form; otherwise the prompt form (vLLM tells them apart the same way). */
export const TokenizeReq = z.union([TokenizeChatReq, TokenizePromptReq]);

export const DetokenizeReq = z.object({
  model: ModelField,
  tokens: z.array(laxInt()),
});

export const TokenizeRes = z.object({
  count: z.number().int(),
  max_model_len: z.number().int(),
  tokens: z.array(z.number().int()),
  token_strs: z.array(z.string()).nullable(),
});

export const DetokenizeRes = z.object({ prompt: z.string() });

export type TokenizeRequest = z.output<typeof TokenizeReq>;
export type DetokenizeRequest = z.output<typeof DetokenizeReq>;
export type TokenizeResponse = z.output<typeof TokenizeRes>;
export type DetokenizeResponse = z.output<typeof DetokenizeRes>;
