import { z } from "zod";
import { laxBool, laxFloat, laxInt } from "../common/lax.js";

/**
 * The Responses API's create body (`POST /v1/responses`): `input` as text or a list of items
 * (messages, `function_call`s and their `function_call_output`s), `instructions`,
 * `previous_response_id`, function `tools` and `tool_choice`, `max_output_tokens`, sampling,
 * `text.format` (structured output) and `store`. Unknown fields are ignored.
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

const ResponsesToolChoice = z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: z.string().min(1) })]);

const TextFormat = z.discriminatedUnion("type", [
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
