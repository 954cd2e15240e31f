import { z } from "zod";
import { laxBool, laxFloat, laxInt } from "../common/lax.js";
import { TokenMetadataFields } from "../pipeline/token-metadata.js";

/**
 * Anthropic's `POST /v1/messages` body: `model`, `max_tokens` and `messages` (user/assistant turns
 * of text, `tool_use` and `tool_result` blocks), a `system` prompt, `stop_sequences`, sampling,
 * `tools` with an `input_schema` and `tool_choice`, `output_config` (structured output, effort).
 * Anthropic's current SDKs no longer send `temperature`/`top_p`/`top_k`; older clients (and
 * `extra_body`) do, and they are honoured. Unknown fields are ignored; blocks of other
 * types (images, documents) pass the schema and are refused by the translation with a clear message.
 * The `message` answer and the streaming events follow the request's types below.
 */

const JsonObject = z.record(z.string(), z.unknown());

const KNOWN_BLOCKS = ["text", "tool_use", "tool_result", "thinking", "redacted_thinking"];

const TextBlock = z.looseObject({ type: z.literal("text"), text: z.string() });

const ToolResultContent = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().nullish() }))]);

export const ContentBlock = z.union([
  TextBlock,
  z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown() }),
  z.looseObject({ type: z.literal("tool_result"), tool_use_id: z.string(), content: ToolResultContent.nullish(), is_error: laxBool().nullish() }),
  z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().nullish() }),
  z.looseObject({ type: z.literal("redacted_thinking") }),
  // Any other kind passes here, so the translation can refuse it by name; a known kind with wrong fields fails above.
  z.looseObject({ type: z.string().refine((type) => !KNOWN_BLOCKS.includes(type), { message: "Input should be a valid content block of its type" }) }),
]);

export const AnthropicMessage = z.object({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(ContentBlock)]),
});

const AnthropicTool = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  input_schema: JsonObject,
  type: z.string().nullish(),
});

const AnthropicToolChoice = z.object({
  type: z.enum(["auto", "any", "tool", "none"]),
  name: z.string().nullish(),
  disable_parallel_tool_use: laxBool().nullish(),
});

export const MessagesReq = z.object({
  model: z.string().describe("A served base model id, wandb-artifact:///entity/project/name[:stepN|:latest], or name@step"),
  max_tokens: laxInt(),
  messages: z.array(AnthropicMessage).min(1),
  system: z.union([z.string(), z.array(TextBlock)]).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  stream: laxBool().nullish(),
  temperature: laxFloat().nullish(),
  top_p: laxFloat().nullish(),
  top_k: laxInt().nullish(),
  tools: z.array(AnthropicTool).nullish(),
  tool_choice: AnthropicToolChoice.nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
  thinking: JsonObject.nullish(),
  return_token_ids: laxBool().nullish().describe("Flywheel extension: add prompt_token_ids, token_ids and logprobs to a whole (not streamed) message; default true for trained-model names"),
  /** Structured output (`format`: a JSON schema the text must match) and `effort` (the template's reasoning effort). */
  output_config: z
    .object({
      effort: z.enum(["low", "medium", "high", "xhigh", "max"]).nullish(),
      format: z.object({ type: z.literal("json_schema"), schema: JsonObject }).nullish(),
    })
    .nullish(),
});

export type MessagesRequest = z.output<typeof MessagesReq>;
export type AnthropicMessageIn = z.output<typeof AnthropicMessage>;
export type ContentBlockIn = z.output<typeof ContentBlock>;

// The `message` answer and its streaming events (`docs/api/chat.md#messages`): what the handler
// returns and what /openapi.json documents for the 200.

const ThinkingOut = z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const TextOut = z.object({ type: z.literal("text"), text: z.string() });
const ToolUseOut = z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown().describe("The call's arguments parsed; unparsable text (a cut-off call) under `_raw`") });
export const ContentBlockOut = z.discriminatedUnion("type", [ThinkingOut, TextOut, ToolUseOut]);
export type ContentBlockOut = z.output<typeof ContentBlockOut>;

export const StopReason = z.enum(["end_turn", "max_tokens", "stop_sequence", "tool_use"]);

export const MessagesRes = z.object({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(ContentBlockOut),
  stop_reason: StopReason,
  stop_sequence: z.string().nullable(),
  usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), cache_creation_input_tokens: z.null(), cache_read_input_tokens: z.null() }),
  ...TokenMetadataFields,
});
export type MessagesResponse = z.output<typeof MessagesRes>;

const BlockDelta = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text_delta"), text: z.string() }),
  z.object({ type: z.literal("thinking_delta"), thinking: z.string() }),
  z.object({ type: z.literal("input_json_delta"), partial_json: z.string() }),
]);

/** Every named event of a streamed message; the SSE event name is the event's `type`. */
export const MessagesStreamEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("message_start"),
    message: z.object({
      id: z.string(),
      type: z.literal("message"),
      role: z.literal("assistant"),
      model: z.string(),
      content: z.array(z.never()),
      stop_reason: z.null(),
      stop_sequence: z.null(),
      usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
    }),
  }),
  z.object({ type: z.literal("ping") }),
  /** The block as it starts: empty text or thinking, or the tool call's id and name with `input` `{}`. */
  z.object({ type: z.literal("content_block_start"), index: z.number().int(), content_block: ContentBlockOut }),
  z.object({ type: z.literal("content_block_delta"), index: z.number().int(), delta: BlockDelta }),
  z.object({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.object({ type: z.literal("message_delta"), delta: z.object({ stop_reason: StopReason, stop_sequence: z.string().nullable() }), usage: z.object({ output_tokens: z.number().int() }) }),
  z.object({ type: z.literal("message_stop") }),
  /** A failure after the stream began; it ends the stream. */
  z.object({ type: z.literal("error"), error: z.object({ type: z.string(), message: z.string() }) }),
]);
export type MessagesStreamEvent = z.output<typeof MessagesStreamEvent>;
