import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { ChatCompletionResponse, ChatMessageIn } from "../completions/protocol.js";
import type { OutputFunctionCall, OutputItemOut, OutputMessage, OutputReasoning, OutputTextPart, ResponsesRequest, ResponsesResponse } from "./protocol.js";

/**
 * The chat core's result as a Responses API `response` object: output items (reasoning, the
 * assistant message with one `output_text` part, one `function_call` per tool call), the status
 * (`incomplete` with reason `max_output_tokens` when the budget ran out), usage, and the request's
 * settings echoed back as OpenAI does.
 */

const hex = () => randomUUID().replaceAll("-", "");
export const responseId = () => `resp_${hex()}`;
export const outputMessageId = () => `msg_${hex()}`;
export const functionCallItemId = () => `fc_${hex()}`;
export const reasoningItemId = () => `rs_${hex()}`;
export const callId = () => `call_${hex().slice(0, 24)}`;

export interface ChatResult {
  content: string | null;
  reasoning: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
}

/** What the whole chat completion body says, in the fields a response is built from. */
export function chatResultOf(chat: ChatCompletionResponse): ChatResult {
  const choice = chat.choices[0]!;
  return {
    content: choice.message.content,
    reasoning: choice.message.reasoning,
    toolCalls: (choice.message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
    finishReason: choice.finish_reason,
    usage: chat.usage,
  };
}

export function outputItems(result: ChatResult): OutputItemOut[] {
  const items: OutputItemOut[] = [];
  if (result.reasoning) items.push(reasoningItem(reasoningItemId(), result.reasoning));
  if (result.content) items.push(messageItem(outputMessageId(), result.content, "completed"));
  for (const call of result.toolCalls) items.push(functionCallItem(functionCallItemId(), call, "completed"));
  return items;
}

export function reasoningItem(id: string, text: string): z.output<typeof OutputReasoning> {
  return { type: "reasoning", id, summary: [], content: [{ type: "reasoning_text", text }] };
}

export function outputTextPart(text: string): z.output<typeof OutputTextPart> {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function messageItem(id: string, text: string | null, status: "in_progress" | "completed"): z.output<typeof OutputMessage> {
  return { type: "message", id, status, role: "assistant", content: text === null ? [] : [outputTextPart(text)] };
}

export function functionCallItem(id: string, call: { id: string; name: string; arguments: string }, status: "in_progress" | "completed"): z.output<typeof OutputFunctionCall> {
  return { type: "function_call", id, call_id: call.id, name: call.name, arguments: call.arguments, status };
}

/** The response object; `output` and `usage` are null while it is in progress (the created/in_progress events). */
export function responseObject(req: ResponsesRequest, meta: { id: string; createdAt: number; model: string }, outcome: { output: OutputItemOut[]; result: ChatResult } | null): ResponsesResponse {
  const incomplete = outcome?.result.finishReason === "length";
  const usage = outcome?.result.usage;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: outcome === null ? "in_progress" : incomplete ? "incomplete" : "completed",
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    model: meta.model,
    output: outcome?.output ?? [],
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: null },
    store: req.store,
    temperature: req.temperature ?? null,
    text: { format: req.text?.format ?? { type: "text" } },
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    top_p: req.top_p ?? null,
    truncation: "disabled",
    usage: usage
      ? {
          input_tokens: usage.prompt_tokens,
          input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
          output_tokens: usage.completion_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
        }
      : null,
    user: req.user ?? null,
  };
}

/** The assistant turn a response adds to the conversation (what `previous_response_id` continues from). */
export function assistantMessage(result: ChatResult): ChatMessageIn {
  const message: ChatMessageIn = { role: "assistant", content: result.content ?? "" };
  if (result.toolCalls.length > 0) message.tool_calls = result.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
  return message;
}
