import { TraceBadRequest } from "../../../store/trace/errors.js";
import { isJsonObject } from "../../../store/trace/object-class.js";
import { ApiError } from "../../errors.js";
import { RequestValidationError } from "../../validation.js";
import { formatPython } from "./prompt-template.js";

/**
 * Weave's `LLMStructuredCompletionModel` (`weave/flow/llm_structured_model.py`) run on this
 * server's engine: `llm_model_id` names a model this server serves (a base model id or a trained
 * model, `wandb-artifact:///entity/project/name[:stepN]`), `default_params.messages_template` is
 * formatted with the row's values as template variables and followed by the row's `user_input`
 * messages, and the reply is parsed by `response_format` (JSON, or text by default).
 */
export const LLM_MODEL_CLASS = "LLMStructuredCompletionModel";

export interface LlmModel {
  modelId: string;
  messagesTemplate: Record<string, unknown>[];
  /** Chat request fields from `default_params`. */
  params: Record<string, unknown>;
  /** `json`: the reply is parsed as JSON (a JSON object or a JSON schema constrains it); `text`: as it is. */
  parse: "json" | "text";
}

/** Sends a chat completion request body (the OpenAI shape) and returns the response body. */
export type ChatRunner = (body: Record<string, unknown>, signal?: AbortSignal) => Promise<Record<string, unknown>>;

export interface Prediction {
  output: unknown;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Plain JSON: stored values keep Python's number spellings in wrapper objects the chat schema does not know. */
export function plainJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function classNameOf(value: unknown): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const name = value._class_name ?? value._type;
  return typeof name === "string" ? name : undefined;
}

/** A stored LLMStructuredCompletionModel value; 400 for anything else. */
export function llmModelOf(value: unknown, ref: string): LlmModel {
  if (classNameOf(value) !== LLM_MODEL_CLASS || !isJsonObject(value)) {
    throw new TraceBadRequest(`Invalid model reference ${ref}: expected ${LLM_MODEL_CLASS}, got ${classNameOf(value) ?? typeof value}`);
  }
  if (typeof value.llm_model_id !== "string" || value.llm_model_id === "") throw new TraceBadRequest(`Model ${ref} has no llm_model_id`);
  const defaults = isJsonObject(value.default_params) ? plainJson(value.default_params) : {};
  const template = Array.isArray(defaults.messages_template) ? defaults.messages_template.filter(isJsonObject) : [];
  const params: Record<string, unknown> = {};
  for (const key of ["temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty"]) if (defaults[key] !== null && defaults[key] !== undefined) params[key] = defaults[key];
  if (Array.isArray(defaults.stop) && defaults.stop.length > 0) params.stop = defaults.stop;
  if (typeof defaults.n_times === "number") params.n = defaults.n_times;
  const format = defaults.response_format;
  let parse: LlmModel["parse"] = "text";
  if (format === "json" || format === "json_object") {
    params.response_format = { type: "json_object" };
    parse = "json";
  } else if (isJsonObject(format) && typeof format.type === "string" && format.type !== "text") {
    params.response_format = format;
    parse = "json";
  }
  return { modelId: value.llm_model_id, messagesTemplate: template, params, parse };
}

/** A served model named directly: no template, default sampling, text replies. */
export function bareModel(modelId: string): LlmModel {
  return { modelId, messagesTemplate: [], params: {}, parse: "text" };
}

/** Formats every string of a message (and of lists of part objects in it) with the template variables. */
function formatMessage(message: Record<string, unknown>, vars: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) {
    if (typeof value === "string") out[key] = formatPython(value, vars);
    else if (Array.isArray(value) && value.every(isJsonObject)) out[key] = value.map((part) => formatMessage(part, vars));
    else out[key] = value;
  }
  return out;
}

/** `user_input` as messages: a list of message objects, or one string as a user message. */
function userMessages(userInput: unknown): Record<string, unknown>[] {
  if (userInput === undefined || userInput === null) return [];
  if (typeof userInput === "string") return [{ role: "user", content: userInput }];
  if (Array.isArray(userInput) && userInput.every(isJsonObject)) return plainJson(userInput);
  throw new Error("user_input must be a list of chat messages or a string");
}

/** The messages a prediction sends: the formatted template, then the user input. */
export function predictionMessages(model: LlmModel, userInput: unknown, templateVars: Record<string, unknown>): Record<string, unknown>[] {
  const template = Object.keys(templateVars).length > 0 ? model.messagesTemplate.map((message) => formatMessage(message, templateVars)) : model.messagesTemplate;
  const messages = [...template, ...userMessages(userInput)];
  if (messages.length === 0) throw new Error(`Nothing to send to ${model.modelId}: the model has no messages_template and the input has no user_input`);
  return messages;
}

/** Runs one prediction on the engine through the chat completions path and parses the reply. */
export async function predict(model: LlmModel, messages: Record<string, unknown>[], chat: ChatRunner, signal?: AbortSignal): Promise<Prediction> {
  let response: Record<string, unknown>;
  try {
    response = await chat({ ...model.params, model: model.modelId, messages }, signal);
  } catch (error) {
    throw new Error(describeChatError(error));
  }
  const choices = response.choices as { message?: { content?: string | null } }[] | undefined;
  const content = choices?.[0]?.message?.content;
  if (content === null || content === undefined) throw new Error(`The model ${model.modelId} returned no text`);
  const usage = response.usage as Prediction["usage"];
  if (model.parse === "text") return { output: content, usage };
  try {
    return { output: JSON.parse(content), usage };
  } catch {
    throw new Error(`The reply of ${model.modelId} was not valid JSON (response_format asks for JSON): ${content.length > 200 ? `${content.slice(0, 200)}...` : content}`);
  }
}

function describeChatError(error: unknown): string {
  if (error instanceof RequestValidationError) return `Invalid chat request: ${error.issues.map((issue) => `${issue.loc.slice(1).join(".")}: ${issue.msg}`).join("; ")}`;
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
