import { Environment, Interpreter, Template } from "@huggingface/jinja";
import type { ChatTemplates } from "./checkpoint/tokenizer-config.js";
import { strftime } from "./strftime.js";

/**
 * Chat templates rendered with Hugging Face `apply_chat_template` semantics (docs/api/chat.md#chat-templates):
 * Jinja with trim_blocks/lstrip_blocks, `raise_exception`, `strftime_now`, HF's `tojson`, the
 * tokenizer's special tokens as variables, and `continue_final_message` cutting the render right
 * after the final message's text.
 */

export type ChatTemplateErrorKind =
  /** The model has no chat template and the request gave none. */
  | "missing"
  /** The template does not parse. */
  | "syntax"
  /** The template called `raise_exception(message)`; the message is the error's message as is. */
  | "raised"
  /** Rendering failed otherwise (a runtime error in the template). */
  | "render"
  /** continue_final_message could not find the final message in the render. */
  | "continue_final_message"
  /** Rendering ran past a limit: time, memory, output size (`ChatTemplatePool`). */
  | "limit";

/** A chat template that cannot produce a prompt; the chat endpoint answers 400 with the message. */
export class ChatTemplateError extends Error {
  constructor(
    readonly kind: ChatTemplateErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "ChatTemplateError";
  }
}

export const MISSING_TEMPLATE_MESSAGE = "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.";

/**
 * The template for a request: `requested` (a template string, or the name of one of the model's
 * named templates), else the model's `tool_use` template when tools are given, else its default.
 */
export function resolveChatTemplate(templates: ChatTemplates, options: { requested?: string | null; hasTools?: boolean } = {}): string {
  const { requested, hasTools = false } = options;
  if (requested !== undefined && requested !== null) {
    if (requested === "default" && templates.default !== undefined) return templates.default;
    return templates.named[requested] ?? requested;
  }
  const template = (hasTools ? templates.named.tool_use : undefined) ?? templates.default;
  if (template === undefined) throw new ChatTemplateError("missing", MISSING_TEMPLATE_MESSAGE);
  return template;
}

export interface ChatTemplateRequest {
  /** Messages as the template should see them (already normalized by the caller). */
  messages: readonly Record<string, unknown>[];
  tools?: readonly unknown[] | null;
  documents?: readonly unknown[] | null;
  /** Default false, as in transformers (the chat endpoint passes its own default, true). */
  addGenerationPrompt?: boolean;
  continueFinalMessage?: boolean;
  reasoningEffort?: string | null;
  /** The tokenizer's special tokens by variable name: `bos_token`, `eos_token`, `pad_token`, … */
  specialTokens?: Record<string, unknown>;
  /** Server-wide defaults for template variables (lowest precedence after the special tokens). */
  defaultKwargs?: Record<string, unknown>;
  /** The request's `chat_template_kwargs`. */
  kwargs?: Record<string, unknown>;
}

/** Renders `template` for a conversation; throws ChatTemplateError with a user-facing message. */
export function renderChatTemplate(template: string, request: ChatTemplateRequest): string {
  const { messages, continueFinalMessage = false, addGenerationPrompt = false } = request;
  if (continueFinalMessage && addGenerationPrompt) {
    throw new ChatTemplateError(
      "continue_final_message",
      "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead.",
    );
  }
  const variables = templateVariables(request);
  const rendered = render(compile(template), variables);
  return continueFinalMessage ? cutAfterFinalMessage(rendered, messages) : rendered;
}

/**
 * Precedence, low to high: special tokens < server defaults < tools < request kwargs < explicit
 * fields. `tools` and `documents` are always defined, as none when absent (transformers passes
 * them so): templates test `tools is not none`, which an undefined variable would pass.
 */
function templateVariables(request: ChatTemplateRequest): Record<string, unknown> {
  const variables: Record<string, unknown> = { ...request.specialTokens, ...request.defaultKwargs };
  variables.tools = request.tools ?? null;
  variables.documents = null;
  Object.assign(variables, request.kwargs);
  const explicit: Record<string, unknown> = {
    add_generation_prompt: request.addGenerationPrompt ?? false,
    continue_final_message: request.continueFinalMessage ?? false,
    documents: request.documents,
    reasoning_effort: request.reasoningEffort,
  };
  for (const [key, value] of Object.entries(explicit)) if (value !== undefined && value !== null) variables[key] = value;
  // vLLM: a reasoning effort also switches thinking on or off unless the request said otherwise.
  if (typeof request.reasoningEffort === "string" && request.kwargs?.enable_thinking === undefined) {
    variables.enable_thinking = request.reasoningEffort !== "none";
  }
  variables.messages = request.messages;
  variables.raise_exception = (message: unknown) => {
    throw new TemplateRaised(String(message));
  };
  variables.strftime_now = (format: unknown) => strftime(new Date(), String(format));
  return withoutUndefined(variables) as Record<string, unknown>;
}

class TemplateRaised extends Error {}

const compiled = new Map<string, Template>();
const MAX_COMPILED = 64;

function compile(template: string): Template {
  const hit = compiled.get(template);
  if (hit) return hit;
  let parsed: Template;
  try {
    parsed = new Template(template);
  } catch (error) {
    throw new ChatTemplateError("syntax", `The chat template could not be parsed: ${(error as Error).message}`);
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(template, parsed);
  return parsed;
}

/**
 * Template.render would declare its own `raise_exception` and refuse ours, so this sets up the
 * environment itself: Jinja's constants, `range`, and the variables (our helpers included).
 */
function render(template: Template, variables: Record<string, unknown>): string {
  const environment = new Environment();
  const globals = { true: true, false: false, none: null, True: true, False: false, None: null, range: pythonRange };
  try {
    for (const [name, value] of Object.entries({ ...globals, ...variables })) environment.set(name, value);
    return new Interpreter(environment).run(template.parsed).value as string;
  } catch (error) {
    if (error instanceof TemplateRaised) throw new ChatTemplateError("raised", error.message);
    throw new ChatTemplateError("render", `The chat template could not be rendered: ${(error as Error).message}`);
  }
}

/**
 * transformers' continue_final_message: find the last occurrence of the final message's text
 * (stripped) and cut everything after it, keeping the text's trailing whitespace only if the
 * template kept it too.
 */
function cutAfterFinalMessage(rendered: string, messages: readonly Record<string, unknown>[]): string {
  const final = finalMessageText(messages);
  const stripped = final.trim();
  const location = stripped === "" ? -1 : rendered.lastIndexOf(stripped);
  if (location < 0) {
    throw new ChatTemplateError(
      "continue_final_message",
      "continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.",
    );
  }
  const withTrailing = final.trimStart();
  if (rendered.slice(location, location + withTrailing.length) === final) return rendered.slice(0, location + withTrailing.length);
  return rendered.slice(0, location + stripped.length);
}

function finalMessageText(messages: readonly Record<string, unknown>[]): string {
  const last = messages[messages.length - 1];
  const content = last?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    for (let i = content.length - 1; i >= 0; i--) {
      const part = content[i] as Record<string, unknown> | null;
      if (part && typeof part === "object" && typeof part.text === "string") return part.text;
    }
  }
  throw new ChatTemplateError("continue_final_message", "continue_final_message is set but we could not find any text to continue in the final message!");
}

/** jinja2's sandbox (which transformers renders in) refuses longer ranges. */
const MAX_RANGE = 100_000;

/** Python's range(stop) / range(start, stop[, step]), at most MAX_RANGE items as in jinja2's sandbox. */
function pythonRange(...args: unknown[]): number[] {
  if (args.length < 1 || args.length > 3 || !args.every((arg) => Number.isInteger(arg))) throw new Error("range expects 1 to 3 integer arguments");
  const [start, stop, step = 1] = (args.length === 1 ? [0, args[0]] : args) as number[];
  if (step === 0) throw new Error("range() arg 3 must not be zero");
  if (Math.ceil((stop! - start!) / step) > MAX_RANGE) throw new Error(`Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`);
  const out: number[] = [];
  for (let i = start!; step > 0 ? i < stop! : i > stop!; i += step) out.push(i);
  return out;
}

/** Jinja sees a missing key as undefined; drop undefined members so `is defined` tests agree. */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) if (member !== undefined) out[key] = withoutUndefined(member);
    return out;
  }
  return value;
}
