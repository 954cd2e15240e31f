import { z } from "zod";
import { laxBool, laxFloat, laxInt } from "../common/lax.js";
import { TokenMetadataFields } from "../pipeline/token-metadata.js";

/**
 * The Responses API's create body (`POST /v1/responses`): `input` as text or a list of items
 * (messages, `function_call`s and their `function_call_output`s), `instructions`,
 * `previous_response_id`, function `tools` and `tool_choice`, `max_output_tokens`, sampling,
 * `text.format` (structured output) and `store`. Unknown fields are ignored. The `response` object
 * and the streaming events follow the request's types below.
 */

const JsonObject = z.record(z.string(), z.unknown());

const InputContentPart = z.looseObject({ type: z.string(), text: z.string().nullish() });

const MessageItem = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(InputContentPart)]),
});

const FunctionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().nullish(),
});

const FunctionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: z.union([z.string(), z.array(InputContentPart)]),
});

const ReasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  content: z.array(InputContentPart).nullish(),
  summary: z.array(InputContentPart).nullish(),
});

export const InputItem = z.union([MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem]);

export const ResponsesTool = z.looseObject({
  type: z.string(),
  name: z.string().nullish(),
  description: z.string().nullish(),
  parameters: JsonObject.nullish(),
  strict: laxBool().nullish(),
});

export const ResponsesToolChoice = z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: z.string().min(1) })]);

export const TextFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({ type: z.literal("json_schema"), name: z.string().nullish(), schema: JsonObject, description: z.string().nullish(), strict: laxBool().nullish() }),
]);

export const ResponsesReq = z.object({
  model: z.string().describe("A served base model id, wandb-artifact:///entity/project/name[:stepN|:latest], or name@step"),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.string().nullish(),
  previous_response_id: z.string().nullish(),
  tools: z.array(ResponsesTool).nullish(),
  tool_choice: ResponsesToolChoice.nullish(),
  parallel_tool_calls: laxBool().nullish(),
  max_output_tokens: laxInt().nullish(),
  temperature: laxFloat().nullish(),
  top_p: laxFloat().nullish(),
  text: z.object({ format: TextFormat.nullish() }).nullish(),
  reasoning: z.looseObject({ effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullish() }).nullish(),
  stream: laxBool().nullish(),
  store: laxBool().default(true),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  return_token_ids: laxBool().nullish().describe("Flywheel extension: add prompt_token_ids, token_ids and logprobs to a whole (not streamed) response; default true for trained-model names"),
});

export type ResponsesRequest = z.output<typeof ResponsesReq>;
export type InputItemIn = z.output<typeof InputItem>;

// The `response` object and its streaming events (`docs/api/chat.md#responses`): what the handler
// returns and what /openapi.json documents for the 200.

/** Always empty: Flywheel attaches no annotations or per-part logprobs. */
const Empty = z.array(z.never());

export const OutputTextPart = z.object({ type: z.literal("output_text"), text: z.string(), annotations: Empty, logprobs: Empty });

const ItemStatus = z.enum(["in_progress", "completed"]);

export const OutputReasoning = z.object({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: Empty,
  /** Empty in `response.output_item.added`; the whole text once done. */
  content: z.array(z.object({ type: z.literal("reasoning_text"), text: z.string() })),
});

export const OutputMessage = z.object({ type: z.literal("message"), id: z.string(), status: ItemStatus, role: z.literal("assistant"), content: z.array(OutputTextPart) });

export const OutputFunctionCall = z.object({ type: z.literal("function_call"), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: ItemStatus });

export const OutputItem = z.discriminatedUnion("type", [OutputReasoning, OutputMessage, OutputFunctionCall]);

const ResponseUsage = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ cached_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});

export const ResponsesRes = z.object({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.number().int(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  background: z.literal(false),
  error: z.null(),
  incomplete_details: z.object({ reason: z.literal("max_output_tokens") }).nullable(),
  instructions: z.string().nullable(),
  max_output_tokens: z.number().int().nullable(),
  metadata: z.record(z.string(), z.string()),
  model: z.string(),
  output: z.array(OutputItem),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.null() }),
  store: z.boolean(),
  temperature: z.number().nullable(),
  text: z.object({ format: TextFormat }),
  tool_choice: ResponsesToolChoice,
  tools: z.array(ResponsesTool),
  top_p: z.number().nullable(),
  truncation: z.literal("disabled"),
  /** Null while the response is in progress. */
  usage: ResponseUsage.nullable(),
  user: z.string().nullable(),
  ...TokenMetadataFields,
});
export type ResponsesResponse = z.output<typeof ResponsesRes>;
export type OutputItemOut = z.output<typeof OutputItem>;

export const ResponseDeletedRes = z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) });

const Sequenced = { sequence_number: z.number().int() };
const InItem = { item_id: z.string(), output_index: z.number().int() };
const InPart = { ...InItem, content_index: z.number().int() };

/** Every named event of a streamed response; the SSE event name is the event's `type`. */
export const ResponsesStreamEvent = z.union([
  z.object({ type: z.enum(["response.created", "response.in_progress", "response.completed", "response.incomplete"]), ...Sequenced, response: ResponsesRes }),
  z.object({ type: z.enum(["response.output_item.added", "response.output_item.done"]), ...Sequenced, output_index: z.number().int(), item: OutputItem }),
  z.object({ type: z.enum(["response.content_part.added", "response.content_part.done"]), ...Sequenced, ...InPart, part: OutputTextPart }),
  z.object({ type: z.literal("response.output_text.delta"), ...Sequenced, ...InPart, delta: z.string(), logprobs: Empty }),
  z.object({ type: z.literal("response.output_text.done"), ...Sequenced, ...InPart, text: z.string(), logprobs: Empty }),
  z.object({ type: z.literal("response.reasoning_text.delta"), ...Sequenced, ...InPart, delta: z.string() }),
  z.object({ type: z.literal("response.reasoning_text.done"), ...Sequenced, ...InPart, text: z.string() }),
  z.object({ type: z.literal("response.function_call_arguments.delta"), ...Sequenced, ...InItem, delta: z.string() }),
  z.object({ type: z.literal("response.function_call_arguments.done"), ...Sequenced, ...InItem, name: z.string(), arguments: z.string() }),
  /** A failure after the stream began; it ends the stream. */
  z.object({ type: z.literal("error"), code: z.string(), message: z.string(), param: z.string().nullable() }),
]);
export type ResponsesStreamEvent = z.output<typeof ResponsesStreamEvent>;
