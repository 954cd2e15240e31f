import type { InferenceEngine } from "../../engine/api.js";
import { ApiError } from "../errors.js";
import { chatRuleError } from "./chat-errors.js";
import { detectContentFormat, type TemplateMessage, type TemplateTool, toTemplateMessages, toTemplateTools } from "./messages.js";
import type { ChatCompletionRequest } from "./request-schema.js";

/**
 * Chat template rendering as the handler needs it (`spec/chat.md` §11): which template, which
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
 * `strftime_now`, HF's `tojson`). Template errors throw an Error whose message the caller sees
 * in a 400. Implemented over @huggingface/jinja by the engine; injected through `ChatEngines`.
 */
export type ChatTemplateRenderer = (model: TemplateModel, input: ChatTemplateInput) => string;

/** What rendering needs of an engine: its model info (template) and tokenizer (special tokens). */
export type TemplateModel = Pick<InferenceEngine, "info" | "tokenizer">;

export const NO_TEMPLATE_MESSAGE =
  "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.";

const CONSUMED_KWARGS = ["add_generation_prompt", "continue_final_message", "documents"];

/** The template input for a request; the request's own template wins over the model's. */
export function chatTemplateInput(req: ChatCompletionRequest, modelTemplate: string | undefined): ChatTemplateInput {
  const template = req.chat_template ?? modelTemplate;
  if (template === undefined || template === "") throw chatRuleError(NO_TEMPLATE_MESSAGE);
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
export function renderPrompt(req: ChatCompletionRequest, engine: TemplateModel, render: ChatTemplateRenderer): RenderedPrompt {
  const input = chatTemplateInput(req, engine.info.chatTemplate);
  let text: string;
  try {
    text = render(engine, input);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw chatRuleError(error instanceof Error ? error.message : String(error));
  }
  return { text, tokenIds: engine.tokenizer.encode(text, { addSpecialTokens: req.add_special_tokens }) };
}

/** The role of the generated message: the assistant after a generation prompt, else the last message's own role. */
export function responseRole(req: ChatCompletionRequest): string {
  return req.add_generation_prompt ? "assistant" : req.messages[req.messages.length - 1]!.role;
}
