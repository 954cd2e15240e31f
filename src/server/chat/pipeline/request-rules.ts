import { pythonRepr } from "../../../python-format.js";
import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionRequest, ContentPartIn } from "../completions/protocol.js";

/**
 * The request-level chat rules vLLM runs as model validators (`docs/api/chat.md#request`,
 * `docs/api/chat.md#tool-choice`, `docs/api/chat.md#structured-outputs`, `docs/api/chat.md#extensions`):
 * cross-field checks that need no model. Each failure is a 400 with vLLM's text and param. Runs after the
 * schema (422) and before the model lookup (404), in vLLM's order.
 */
export function checkRequestRules(req: ChatCompletionRequest, effective: { logprobs: boolean }): void {
  checkCacheSalt(req.cache_salt);
  checkResponseFormat(req);
  checkStreamOptions(req);
  checkLogprobOptions(req, effective.logprobs);
  checkStructuredOutputKinds(req);
  checkToolUsage(req);
  checkGenerationPrompt(req);
  checkChatTemplateKwargs(req.chat_template_kwargs);
  checkRepetitionDetection(req);
  checkContentParts(req);
}

const FORBIDDEN_SALT_CHARACTERS = /[@/\\\0]/;

function checkCacheSalt(salt: string | null | undefined): void {
  if (salt === null || salt === undefined) return;
  if (salt.length === 0) throw chatRuleError("Parameter 'cache_salt' must be a non-empty string if provided.", { param: "cache_salt" });
  if (salt.length > 128 || FORBIDDEN_SALT_CHARACTERS.test(salt)) {
    throw chatRuleError("Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\', or NUL.", { param: "cache_salt" });
  }
}

function checkResponseFormat(req: ChatCompletionRequest): void {
  const format = req.response_format;
  if (!format) return;
  if (format.type === "json_schema" && !format.json_schema) {
    throw chatRuleError("When response_format type is 'json_schema', the 'json_schema' field must be provided.", { param: "response_format" });
  }
  if (format.type === "structural_tag" && !isStructuralTag(format)) {
    throw chatRuleError("Invalid response_format structural_tag specification.", { param: "response_format" });
  }
}

/** The two structural-tag shapes xgrammar accepts: `structures` + `triggers` (legacy) or `format`. */
export function isStructuralTag(value: Record<string, unknown>): boolean {
  if (value.format !== undefined) return typeof value.format === "object" && value.format !== null && !Array.isArray(value.format);
  const { structures, triggers } = value;
  if (!Array.isArray(structures) || !Array.isArray(triggers)) return false;
  const validStructure = (item: unknown) => typeof item === "object" && item !== null && typeof (item as Record<string, unknown>).begin === "string" && typeof (item as Record<string, unknown>).end === "string";
  return structures.every(validStructure) && triggers.every((trigger) => typeof trigger === "string");
}

function checkStreamOptions(req: ChatCompletionRequest): void {
  // vLLM tests the raw object's truthiness: `{}` passes, `{"include_usage": null}` does not.
  if (req.stream_options && Object.keys(req.stream_options).length > 0 && !req.stream) {
    throw chatRuleError("Stream options can only be defined when `stream=True`.", { param: "stream_options" });
  }
}

function checkLogprobOptions(req: ChatCompletionRequest, logprobs: boolean): void {
  const prompt = req.prompt_logprobs;
  if (prompt !== null && prompt !== undefined) {
    if (req.stream && (prompt > 0 || prompt === -1)) {
      throw chatRuleError("`prompt_logprobs` are not available when `stream=True`.", { param: "prompt_logprobs" });
    }
    if (prompt < 0 && prompt !== -1) throw chatRuleError("`prompt_logprobs` must be a positive value or -1.", { param: "prompt_logprobs", value: prompt });
  }
  const top = req.top_logprobs;
  if (top !== null && top !== undefined) {
    if (top < 0 && top !== -1) throw chatRuleError("`top_logprobs` must be a positive value or -1.", { param: "top_logprobs", value: top });
    if ((top === -1 || top > 0) && !logprobs) throw chatRuleError("when using `top_logprobs`, `logprobs` must be set to true.", { param: "top_logprobs" });
  }
}

function checkStructuredOutputKinds(req: ChatCompletionRequest): void {
  const outputs = req.structured_outputs;
  if (!outputs) return;
  const count = [outputs.json, outputs.regex, outputs.choice].filter((value) => value !== null && value !== undefined).length;
  if (count > 1) throw chatRuleError("You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').");
  if (count > 0 && typeof req.tool_choice === "object" && req.tool_choice !== null) {
    throw chatRuleError("You can only either use constraints for structured outputs or tools, not both.");
  }
}

function checkToolUsage(req: ChatCompletionRequest): void {
  if (req.tools && req.tools.length === 0) {
    throw chatRuleError("`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", { param: "tools" });
  }
  const choice = req.tool_choice;
  if (choice === undefined || choice === null || choice === "none") return;
  if (!req.tools) throw chatRuleError("When using `tool_choice`, `tools` must be set.", { param: "tool_choice" });
  if (typeof choice === "object" && !req.tools.some((tool) => tool.function.name === choice.function.name)) {
    throw chatRuleError("The tool specified in `tool_choice` does not match any of the specified `tools`", { param: "tool_choice" });
  }
}

function checkGenerationPrompt(req: ChatCompletionRequest): void {
  if (req.continue_final_message && req.add_generation_prompt) {
    throw chatRuleError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
  }
}

/**
 * Keys the renderer itself binds. vLLM refuses `chat_template` and `tokenize` with this text, and
 * fails on `messages`/`tools` with a duplicate-argument error; we refuse all four the same way.
 */
const RESERVED_TEMPLATE_KWARGS = ["chat_template", "tokenize", "messages", "tools"];

function checkChatTemplateKwargs(kwargs: Record<string, unknown> | null | undefined): void {
  if (!kwargs) return;
  const unexpected = RESERVED_TEMPLATE_KWARGS.filter((key) => key in kwargs);
  if (unexpected.length > 0) {
    throw chatRuleError(`Found unexpected chat template kwargs from request: {${unexpected.map((key) => pythonRepr(key)).join(", ")}}`);
  }
}

function checkRepetitionDetection(req: ChatCompletionRequest): void {
  const detection = req.repetition_detection;
  if (!detection) return;
  const { max_pattern_size: max, min_pattern_size: min, min_count: count } = detection;
  if (max < 0 || min < 0 || min > max) {
    throw chatRuleError("max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. Set both to 0 to disable repetitive pattern detection.");
  }
  if (max > 0 && count < 2) {
    throw chatRuleError("min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect repetitive patterns, set max_pattern_size to 0.");
  }
}

const TEXT_PART_TYPES = new Set(["text", "input_text", "refusal"]);

/** The kind of a content part: text kinds pass, media kinds are refused by a text-only server. */
export function contentPartType(part: ContentPartIn): string {
  if (typeof part === "string") return "text";
  if (part.type) return part.type;
  for (const media of ["image_url", "input_image", "image_embeds", "audio_url", "input_audio", "video_url", "file"]) {
    if (media in part) return media;
  }
  return "text";
}

function checkContentParts(req: ChatCompletionRequest): void {
  req.messages.forEach((message, index) => {
    if (!Array.isArray(message.content)) return;
    for (const part of message.content) {
      const type = contentPartType(part);
      if (!TEXT_PART_TYPES.has(type)) {
        throw chatRuleError(`messages[${index}]: content of type '${type}' is not supported: this server serves text-only models.`, { param: "messages" });
      }
      const field = type === "refusal" ? "refusal" : "text";
      if (typeof part !== "string" && typeof part[field] !== "string") {
        throw chatRuleError(`messages[${index}]: a content part of type '${type}' needs a '${field}' string.`, { param: "messages" });
      }
    }
  });
}
