import { badRequest } from "../../errors.js";
import { parseInput } from "../../validation.js";
import type { ChatCompletionRequest, ChatMessageIn } from "../completions/protocol.js";
import { ChatCompletionReq } from "../completions/protocol.js";
import type { AnthropicMessageIn, ContentBlockIn, MessagesRequest } from "./protocol.js";

/**
 * A Messages request → the chat completion request the chat core runs: `system` becomes a system
 * message, `tool_use` blocks assistant tool calls (input as JSON arguments), each `tool_result` a
 * `tool` message answering its call, `thinking` the assistant's reasoning; Anthropic's tool choice
 * kinds map onto chat's (`any` is `required`, `tool` a named function). Chat's own rules then run
 * unchanged (sampling ranges, template, tool-choice support).
 */
export function toChatRequest(req: MessagesRequest): ChatCompletionRequest {
  const messages: ChatMessageIn[] = [];
  if (req.system !== null && req.system !== undefined) {
    const text = typeof req.system === "string" ? req.system : req.system.map((block) => block.text).join("\n");
    if (text !== "") messages.push({ role: "system", content: text });
  }
  req.messages.forEach((message, index) => messages.push(...chatMessagesOf(message, index)));
  const tools = req.tools?.map((tool) => ({ type: "function" as const, function: { name: tool.name, description: tool.description ?? null, parameters: tool.input_schema } }));
  const body: Record<string, unknown> = {
    model: req.model,
    messages,
    max_completion_tokens: req.max_tokens,
    temperature: req.temperature,
    top_p: req.top_p,
    top_k: req.top_k,
    tools: tools && tools.length > 0 ? tools : null,
    tool_choice: toolChoiceOf(req, tools !== undefined && tools.length > 0),
    parallel_tool_calls: req.tool_choice?.disable_parallel_tool_use ? false : null,
    user: req.metadata?.user_id ?? null,
    stream: req.stream ?? false,
    logprobs: false,
  };
  const format = req.output_config?.format;
  if (format) body.response_format = { type: "json_schema", json_schema: { name: "output", schema: format.schema } };
  if (req.output_config?.effort) body.reasoning_effort = req.output_config.effort;
  if (req.tool_choice?.type === "none") body.tool_choice = "none";
  const chat = parseInput(ChatCompletionReq, body, "body");
  // Anthropic sets no cap on stop sequences (chat's schema allows 4).
  if (req.stop_sequences && req.stop_sequences.length > 0) chat.stop = req.stop_sequences;
  return chat;
}

function toolChoiceOf(req: MessagesRequest, hasTools: boolean): unknown {
  const choice = req.tool_choice;
  if (!choice) return undefined;
  switch (choice.type) {
    case "auto":
      return hasTools ? "auto" : undefined;
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      if (!choice.name) throw badRequest("tool_choice.name: Field required when tool_choice.type is 'tool'", "tool_choice");
      return { type: "function", function: { name: choice.name } };
  }
}

function chatMessagesOf(message: AnthropicMessageIn, index: number): ChatMessageIn[] {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
  if (message.role === "assistant") return [assistantMessage(message.content, index)];
  const out: ChatMessageIn[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) out.push({ role: "user", content: text.join("\n") });
    text = [];
  };
  message.content.forEach((block, blockIndex) => {
    if (block.type === "text") text.push((block as { text: string }).text);
    else if (block.type === "tool_result") {
      flush();
      const result = block as Extract<ContentBlockIn, { tool_use_id: string }>;
      out.push({ role: "tool", tool_call_id: result.tool_use_id, content: toolResultText(result.content) });
    } else throw unsupportedBlock(block.type, index, blockIndex, "user");
  });
  flush();
  return out.length > 0 ? out : [{ role: "user", content: "" }];
}

function assistantMessage(blocks: ContentBlockIn[], index: number): ChatMessageIn {
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: NonNullable<ChatMessageIn["tool_calls"]> = [];
  blocks.forEach((block, blockIndex) => {
    if (block.type === "text") text.push((block as { text: string }).text);
    else if (block.type === "thinking") reasoning.push((block as { thinking: string }).thinking);
    else if (block.type === "redacted_thinking") return;
    else if (block.type === "tool_use") {
      const call = block as Extract<ContentBlockIn, { type: "tool_use" }>;
      toolCalls.push({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) } });
    } else throw unsupportedBlock(block.type, index, blockIndex, "assistant");
  });
  const message: ChatMessageIn = { role: "assistant", content: text.join("") };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning = reasoning.join("");
  return message;
}

function toolResultText(content: Extract<ContentBlockIn, { tool_use_id: string }>["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("\n");
}

function unsupportedBlock(type: string, index: number, blockIndex: number, role: string) {
  return badRequest(`messages.${index}.content.${blockIndex}: content blocks of type '${type}' are not supported in ${role} messages: this server serves text-only models.`, "messages");
}
