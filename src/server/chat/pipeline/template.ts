import type { InferenceEngine } from "../../../engine/api.js";
import { ChatTemplateError, MISSING_TEMPLATE_MESSAGE, resolveChatTemplate } from "../../../engine/chat-template.js";
import type { ChatTemplates } from "../../../engine/checkpoint/tokenizer-config.js";
import { ApiError } from "../../errors.js";
import { chatRuleError } from "../common/chat-errors.js";
import { detectContentFormat, type TemplateMessage, type TemplateTool, toTemplateMessages, toTemplateTools } from "./messages.js";
import type { ChatCompletionRequest } from "../completions/protocol.js";

/**
 * Chat template rendering as the handler needs it (`docs/api/chat.md#chat-templates`): which template, which
 * variables in which precedence, then tokenization. The Jinja rendering itself (HF
 * apply_chat_template semantics) sits behind `ChatTemplateRenderer`, implemented by the engine.
 */

/** Everything a chat template renders from, with vLLM's precedence already applied. */
export interface ChatTemplateInput {
  template: string;
  messages: TemplateMessage[];
  tools: TemplateTool[] | undefined;
  documents: Record<string, string>[] | undefined;
  addGenerationPrompt: boolean;
  /** Leave the final message open (no end-of-turn after it), as transformers does. */
  continueFinalMessage: boolean;
  /** Further template variables: the request's chat_template_kwargs, reasoning_effort, enable_thinking. */
  variables: Record<string, unknown>;
}

/**
 * Renders `input.template` with Hugging Face apply_chat_template semantics for this engine's
 * tokenizer (its special tokens as `bos_token`, `eos_token`, … variables; `raise_exception`,
 * `strftime_now`, HF's `tojson`) and tokenizes the render (`addSpecialTokens` adds the tokenizer's
 * own BOS/EOS on top of the template's). Template errors throw an Error whose message the caller
 * sees in a 400. Implemented over @huggingface/jinja by the engine, on threads of its own (work
 * that grows with the request never runs on the event loop); injected through `ChatEngines`.
 */
export type ChatTemplateRenderer = (model: TemplateModel, input: ChatTemplateInput, options: { addSpecialTokens: boolean }) => Promise<RenderedPrompt>;

/** What rendering needs of an engine: its model info (template) and tokenizer (special tokens). */
export type TemplateModel = Pick<InferenceEngine, "info" | "tokenizer">;

/** docs/api/chat.md#chat-templates, in transformers' words (vLLM passes them on). */
export const NO_TEMPLATE_MESSAGE = MISSING_TEMPLATE_MESSAGE;

const CONSUMED_KWARGS = ["add_generation_prompt", "continue_final_message", "documents"];

/**
 * Which template renders a request, as transformers' `get_chat_template` picks it (vLLM calls it):
 * the request's `chat_template` (a template, or the name of one of the model's named templates),
 * else the model's `tool_use` template when tools are sent (whatever `tool_choice` is: vLLM renders
 * the tools then too), else the model's default.
 */
export function selectChatTemplate(req: ChatCompletionRequest, templates: ChatTemplates): string {
  let template: string;
  try {
    template = resolveChatTemplate(templates, { requested: req.chat_template, hasTools: req.tools !== null && req.tools !== undefined });
  } catch (error) {
    if (error instanceof ChatTemplateError) throw chatRuleError(NO_TEMPLATE_MESSAGE);
    throw error;
  }
  if (template === "") throw chatRuleError(NO_TEMPLATE_MESSAGE);
  return template;
}

/** The template input for a request (template chosen by `selectChatTemplate`). */
export function chatTemplateInput(req: ChatCompletionRequest, templates: ChatTemplates): ChatTemplateInput {
  const template = selectChatTemplate(req, templates);
  const kwargs = req.chat_template_kwargs ?? {};
  const variables: Record<string, unknown> = Object.fromEntries(Object.entries(kwargs).filter(([key]) => !CONSUMED_KWARGS.includes(key)));
  if (req.reasoning_effort !== null && req.reasoning_effort !== undefined) {
    variables.reasoning_effort = req.reasoning_effort;
    // vLLM opts templates into thinking from the effort unless the caller decided explicitly.
    if (!("enable_thinking" in kwargs)) variables.enable_thinking = req.reasoning_effort !== "none";
  }
  const kwargDocuments = Array.isArray(kwargs.documents) ? (kwargs.documents as Record<string, string>[]) : undefined;
  return {
    template,
    messages: toTemplateMessages(req.messages, detectContentFormat(template)),
    tools: toTemplateTools(req.tools),
    documents: req.documents ?? kwargDocuments,
    addGenerationPrompt: req.add_generation_prompt,
    continueFinalMessage: req.continue_final_message,
    variables,
  };
}

export interface RenderedPrompt {
  text: string;
  tokenIds: number[];
}

/** Renders and tokenizes; `add_special_tokens` adds the tokenizer's own BOS/EOS on top of the template's. */
export async function renderPrompt(req: ChatCompletionRequest, engine: TemplateModel, render: ChatTemplateRenderer): Promise<RenderedPrompt> {
  const input = chatTemplateInput(req, engine.info.chatTemplates);
  try {
    return await render(engine, input, { addSpecialTokens: req.add_special_tokens });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw chatRuleError(error instanceof Error ? error.message : String(error));
  }
}

/** The role of the generated message: the assistant after a generation prompt, else the last message's own role. */
export function responseRole(req: ChatCompletionRequest): string {
  return req.add_generation_prompt ? "assistant" : req.messages[req.messages.length - 1]!.role;
}
