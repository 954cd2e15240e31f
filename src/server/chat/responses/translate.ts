import { badRequest } from "../../errors.js";
import { parseInput } from "../../validation.js";
import { type ChatCompletionRequest, ChatCompletionReq, type ChatMessageIn } from "../completions/protocol.js";
import type { InputItemIn, ResponsesRequest } from "./protocol.js";

/**
 * A Responses request → the chat completion request the chat core runs. The conversation is the
 * previous response's (when `previous_response_id` names one) followed by this request's input
 * items: messages as they are (`developer` as `system`), a `function_call` as an assistant tool
 * call (consecutive calls join one assistant turn), a `function_call_output` as a `tool` message.
 * `instructions` lead as a system message and, as OpenAI documents, are not carried over to the
 * next response. `text.format` becomes chat's `response_format`.
 */

export interface ResponsesChat {
  chat: ChatCompletionRequest;
  /** The conversation without the instructions: what the next response continues. */
  conversation: ChatMessageIn[];
}

export function toChatRequest(req: ResponsesRequest, previous: ChatMessageIn[]): ResponsesChat {
  const conversation = [...previous, ...inputMessages(req.input)];
  const messages: ChatMessageIn[] = req.instructions ? [{ role: "system", content: req.instructions }, ...conversation] : conversation;
  if (messages.length === 0) throw badRequest("input: the request has no input (and no previous response to continue).", "input");
  const tools = (req.tools ?? []).map((tool, index) => {
    if (tool.type !== "function") throw badRequest(`tools.${index}: tools of type '${tool.type}' are not supported: only function tools are.`, "tools");
    if (!tool.name) throw badRequest(`tools.${index}.name: Field required`, "tools");
    return { type: "function" as const, function: { name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null } };
  });
  const choice = req.tool_choice;
  const body: Record<string, unknown> = {
    model: req.model,
    messages,
    max_completion_tokens: req.max_output_tokens,
    temperature: req.temperature,
    top_p: req.top_p,
    tools: tools.length > 0 ? tools : null,
    tool_choice: choice === null || choice === undefined ? undefined : typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } },
    parallel_tool_calls: req.parallel_tool_calls,
    user: req.user,
    stream: req.stream ?? false,
    logprobs: false,
  };
  const format = req.text?.format;
  if (format?.type === "json_object") body.response_format = { type: "json_object" };
  if (format?.type === "json_schema") body.response_format = { type: "json_schema", json_schema: { name: format.name ?? "output", schema: format.schema, strict: format.strict } };
  if (req.reasoning?.effort) body.reasoning_effort = req.reasoning.effort;
  return { chat: parseInput(ChatCompletionReq, body, "body"), conversation };
}

function partsText(content: string | { type: string; text?: string | null }[]): string {
  if (typeof content === "string") return content;
  return content
    .map((part, index) => {
      if (typeof part.text !== "string") throw badRequest(`input: content of type '${part.type}' (part ${index}) is not supported: this server serves text-only models.`, "input");
      return part.text;
    })
    .join("\n");
}

export function inputMessages(input: ResponsesRequest["input"]): ChatMessageIn[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const out: ChatMessageIn[] = [];
  for (const item of input as InputItemIn[]) {
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = out.at(-1);
      // Calls right after an assistant message (or after each other) belong to that assistant turn, as chat writes it.
      if (last && last.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: "assistant", content: "", tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      out.push({ role: "tool", tool_call_id: item.call_id, content: partsText(item.output) });
    } else if (item.type === "reasoning") {
      // A reasoning item adds nothing to the prompt.
    } else {
      out.push({ role: item.role === "developer" ? "system" : item.role, content: partsText(item.content) });
    }
  }
  return out;
}
