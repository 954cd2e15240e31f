import { randomUUID } from "node:crypto";
import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionResponse } from "../completions/protocol.js";
import type { ContentBlockOut, MessagesResponse } from "./protocol.js";

/**
 * The chat core's result in Anthropic's `message` shape: reasoning as a `thinking` block, the text
 * as a `text` block, each tool call as a `tool_use` block with its arguments parsed into `input`;
 * the finish reason as Anthropic's `stop_reason` (a matched stop string is `stop_sequence`).
 */

export const messageId = () => `msg_${randomUUID().replaceAll("-", "")}`;
export const toolUseId = () => `toolu_${randomUUID().replaceAll("-", "").slice(0, 24)}`;

export type StopInfo = Pick<MessagesResponse, "stop_reason" | "stop_sequence">;

/** Anthropic's stop reason for a chat finish reason and the engine's stop reason (the stop string or token that ended it). */
export function stopInfo(finishReason: string, stopReason: number | string | null, stopSequences: readonly string[]): StopInfo {
  if (finishReason === "tool_calls") return { stop_reason: "tool_use", stop_sequence: null };
  if (finishReason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (typeof stopReason === "string" && stopSequences.includes(stopReason)) return { stop_reason: "stop_sequence", stop_sequence: stopReason };
  return { stop_reason: "end_turn", stop_sequence: null };
}

/** Tool arguments are JSON text in chat; Anthropic's `input` is the object. Unparsable text (a cut-off call) is kept under `_raw`. */
export function toolInput(args: string): unknown {
  if (args.trim() === "") return {};
  try {
    return JSON.parse(args);
  } catch {
    return { _raw: args };
  }
}

export function anthropicMessage(chat: ChatCompletionResponse, id: string, stopSequences: readonly string[]): MessagesResponse {
  const choice = chat.choices[0];
  if (!choice) throw chatRuleError("The engine returned no choice.");
  const content: ContentBlockOut[] = [];
  if (choice.message.reasoning) content.push({ type: "thinking", thinking: choice.message.reasoning, signature: "" });
  if (choice.message.content) content.push({ type: "text", text: choice.message.content });
  for (const call of choice.message.tool_calls ?? []) content.push({ type: "tool_use", id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  const { usage } = chat;
  return {
    id,
    type: "message",
    role: "assistant",
    model: chat.model,
    content,
    ...stopInfo(choice.finish_reason, choice.stop_reason, stopSequences),
    usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, cache_creation_input_tokens: null, cache_read_input_tokens: null },
  };
}
