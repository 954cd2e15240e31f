import { z } from "zod";
import { laxBool, laxFloat, laxInt, laxInt64 } from "../common/lax.js";

/**
 * The chat completion protocol. The request (`docs/api/chat.md#request`): every field with its
 * type and default, pydantic-lax coercion, unknown fields ignored. This schema decides only what a
 * schema can (types, required fields, enums, the ranges interface.md states); everything vLLM
 * checks with its own message texts is a 400 rule in `../pipeline/request-rules.ts` and `../pipeline/sampling.ts`.
 * Fields whose default depends on the model (logprobs, return_tokens_as_token_ids) stay undefined
 * when absent so the handler can tell "unset" from "false". The response and its stream chunks
 * follow the request's types below.
 */

const JsonObject = z.record(z.string(), z.unknown());

/** A text part (`text`, `input_text`, `refusal`), a bare string, or a media part the rules reject. */
const ContentPart = z.union([
  z.string(),
  z.looseObject({
    type: z.string().optional(),
    text: z.string().nullish(),
    refusal: z.string().nullish(),
  }),
]);

export const MessageContent = z.union([z.string(), z.array(ContentPart)]);

const MessageToolCall = z.object({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.object({
    name: z.string(),
    /** A JSON string per OpenAI; an already-parsed object is accepted too. */
    arguments: z.union([z.string(), JsonObject]).nullish(),
  }),
});

export const ChatMessage = z.object({
  role: z.string().describe("system, developer, user, assistant, tool, function, or a custom role the template knows"),
  content: MessageContent.nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(MessageToolCall).nullish(),
  tool_call_id: z.string().nullish(),
  reasoning: z.string().nullish(),
  /** Legacy name of `reasoning`. */
  reasoning_content: z.string().nullish(),
});

export const ToolDefinition = z.object({
  type: z.literal("function").default("function"),
  function: z.object({
    name: z.string(),
    description: z.string().nullish(),
    parameters: JsonObject.nullish(),
    strict: laxBool().nullish(),
  }),
});

const NamedToolChoice = z.object({
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string().min(1) }),
});

export const ToolChoice = z.union([z.enum(["none", "auto", "required"]), NamedToolChoice]);

const JsonSchemaFormat = z.object({
  name: z.string(),
  description: z.string().nullish(),
  schema: z.union([JsonObject, z.boolean()]).nullish(),
  strict: laxBool().nullish(),
});

export const ResponseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({ type: z.literal("json_schema"), json_schema: JsonSchemaFormat.nullish() }),
  z.looseObject({ type: z.literal("structural_tag") }),
]);

export const StructuredOutputs = z.object({
  json: z.union([z.string(), JsonObject, z.boolean()]).nullish(),
  regex: z.string().nullish(),
  choice: z.array(z.string()).nullish(),
  grammar: z.string().nullish(),
  json_object: laxBool().nullish(),
  structural_tag: z.string().nullish(),
  disable_fallback: laxBool().default(false),
  disable_any_whitespace: laxBool().default(false),
  disable_additional_properties: laxBool().default(false),
  whitespace_pattern: z.string().nullish(),
  _backend: z.string().nullish(),
  _backend_was_auto: laxBool().default(false),
});

const StreamOptions = z.object({
  include_usage: laxBool().nullish(),
  continuous_usage_stats: laxBool().nullish(),
});

const RepetitionDetection = z.object({
  max_pattern_size: laxInt().default(0),
  min_pattern_size: laxInt().default(0),
  min_count: laxInt().default(0),
});

const ExtraArgValue = z.union([z.string(), z.number(), z.array(z.union([z.string(), z.number()]))]);

export const ChatCompletionReq = z.object({
  messages: z.array(ChatMessage).min(1),
  model: z.string().nullish().describe("A served base model id, wandb-artifact:///entity/project/name[:stepN|:latest], or name@step"),
  frequency_penalty: laxFloat().nullish(),
  presence_penalty: laxFloat().nullish(),
  logit_bias: z.record(z.string(), laxFloat()).nullish(),
  logprobs: laxBool().nullish().describe("Default false; true for trained-model names"),
  top_logprobs: laxInt().nullish(),
  max_tokens: laxInt().nullish().describe("Deprecated: use max_completion_tokens"),
  max_completion_tokens: laxInt().nullish(),
  n: laxInt().nullish(),
  response_format: ResponseFormat.nullish(),
  seed: laxInt64().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  stream: laxBool().nullish(),
  stream_options: StreamOptions.nullish(),
  temperature: laxFloat().nullish(),
  top_p: laxFloat().nullish(),
  tools: z.array(ToolDefinition).nullish(),
  tool_choice: ToolChoice.nullish(),
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]).nullish(),
  include_reasoning: laxBool().default(true),
  parallel_tool_calls: laxBool().nullish(),
  user: z.string().nullish(),
  use_beam_search: laxBool().default(false),
  top_k: laxInt().nullish(),
  min_p: laxFloat().nullish(),
  repetition_penalty: laxFloat().nullish(),
  length_penalty: laxFloat().default(1),
  stop_token_ids: z.array(laxInt()).nullish(),
  include_stop_str_in_output: laxBool().default(false),
  ignore_eos: laxBool().default(false),
  min_tokens: laxInt().default(0),
  skip_special_tokens: laxBool().default(true),
  spaces_between_special_tokens: laxBool().default(true),
  truncate_prompt_tokens: laxInt64({ min: -1n }).nullish(),
  prompt_logprobs: laxInt().nullish(),
  allowed_token_ids: z.array(laxInt()).nullish(),
  bad_words: z.array(z.string()).default([]),
  echo: laxBool().default(false),
  add_generation_prompt: laxBool().default(true),
  continue_final_message: laxBool().default(false),
  add_special_tokens: laxBool().default(false),
  documents: z.array(z.record(z.string(), z.string())).nullish(),
  chat_template: z.string().nullish(),
  chat_template_kwargs: JsonObject.nullish(),
  mm_processor_kwargs: JsonObject.nullish(),
  structured_outputs: StructuredOutputs.nullish(),
  priority: laxInt64().default(0),
  request_id: z.string().optional(),
  return_tokens_as_token_ids: laxBool().nullish().describe("Default false; true for trained-model names"),
  return_token_ids: laxBool().nullish(),
  cache_salt: z.string().nullish(),
  kv_transfer_params: JsonObject.nullish(),
  /** Inert extension arguments; vLLM clients send them as `vllm_xargs`. */
  engine_xargs: z.record(z.string(), ExtraArgValue).nullish(),
  vllm_xargs: z.record(z.string(), ExtraArgValue).nullish(),
  repetition_detection: RepetitionDetection.nullish(),
});

export type ChatCompletionRequest = z.output<typeof ChatCompletionReq>;
export type ChatMessageIn = z.output<typeof ChatMessage>;
export type ToolDefinitionIn = z.output<typeof ToolDefinition>;
export type StructuredOutputsIn = z.output<typeof StructuredOutputs>;
export type ResponseFormatIn = z.output<typeof ResponseFormat>;
export type ContentPartIn = z.output<typeof ContentPart>;

// The response and its stream chunks (`docs/api/chat.md#response`, `docs/api/chat.md#streaming`):
// what the handler returns and what /openapi.json documents for the 200.

export const TokenId = z.number().int();
const TopLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() });
const ChoiceLogprobs = z.object({ content: z.array(TopLogprob.extend({ top_logprobs: z.array(TopLogprob) })) }).nullable();
const PromptLogprob = z.object({ logprob: z.number(), rank: z.number().int(), decoded_token: z.string() });
/** Per prompt position its logprobs by token (null for the first position, which nothing precedes). */
export const PromptLogprobs = z.array(z.record(z.string(), PromptLogprob).nullable()).nullable();
export const StopReason = z.union([z.number().int(), z.string()]).nullable();

export const ChatCompletionUsage = z.object({
  prompt_tokens: z.number().int(),
  total_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  /** Only in the final usage: prompt tokens served from the prefix cache. */
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).optional(),
});

const ChatCompletionToolCall = z.object({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) });

const ChatCompletionChoice = z.object({
  index: z.number().int(),
  message: z.object({
    role: z.string(),
    content: z.string().nullable(),
    refusal: z.null(),
    annotations: z.null(),
    audio: z.null(),
    function_call: z.null(),
    /** Omitted when the message has no tool calls. */
    tool_calls: z.array(ChatCompletionToolCall).optional(),
    reasoning: z.string().nullable(),
  }),
  logprobs: ChoiceLogprobs,
  finish_reason: z.string(),
  stop_reason: StopReason,
  token_ids: z.array(TokenId).nullable(),
});

export const ChatCompletionRes = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(ChatCompletionChoice),
  service_tier: z.null(),
  system_fingerprint: z.string(),
  usage: ChatCompletionUsage,
  prompt_logprobs: PromptLogprobs,
  prompt_token_ids: z.array(TokenId).nullable(),
  kv_transfer_params: z.null(),
});
export type ChatCompletionResponse = z.output<typeof ChatCompletionRes>;

const ChatCompletionDelta = z.object({
  role: z.string().optional(),
  content: z.string().optional(),
  reasoning: z.string().optional(),
  tool_calls: z.array(z.object({ index: z.number().int(), id: z.string().optional(), type: z.literal("function").optional(), function: z.object({ name: z.string().optional(), arguments: z.string() }) })).optional(),
});

const ChatCompletionChunkChoice = z.object({
  index: z.number().int(),
  delta: ChatCompletionDelta,
  logprobs: ChoiceLogprobs,
  finish_reason: z.string().nullable(),
  /** Only on a choice's finish chunk. */
  stop_reason: StopReason.optional(),
  /** With `return_token_ids`: the ids of this chunk's tokens. */
  token_ids: z.array(TokenId).optional(),
});
export type ChatCompletionChunkChoice = z.output<typeof ChatCompletionChunkChoice>;

/** One `data:` event of a streamed completion; fields never set are left out, not null. */
export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(ChatCompletionChunkChoice),
  usage: ChatCompletionUsage.optional(),
  system_fingerprint: z.string().optional(),
  /** With `return_token_ids`: on the first choice's role chunk. */
  prompt_token_ids: z.array(TokenId).optional(),
});
export type ChatCompletionChunk = z.output<typeof ChatCompletionChunk>;
