import type { GenerateRequest } from "../api.js";
import type { ModelConfig } from "../checkpoint/model-config.js";
import { truncatePrompt } from "../sampling/truncate.js";
import { EngineError } from "./errors.js";

/** A generation request as it crosses into the engine thread: `GenerateRequest` without its signal. */
export type WireGenerateRequest = Omit<GenerateRequest, "signal">;

export interface CheckedPrompt {
  /** The prompt as it runs (after truncate_prompt_tokens). */
  prompt: number[];
  /** min(max_tokens, max_model_len − prompt length). */
  maxTokens: number;
}

const invalid = (message: string) => new EngineError("invalid_request", message);

/**
 * The checks the engine makes itself before queueing a request (the chat layer has made the
 * user-facing ones already, with vLLM's texts; other callers get these): ids, token ids inside the
 * vocabulary, truncation, and room for at least one generated token.
 */
export function checkRequest(request: WireGenerateRequest, config: ModelConfig): CheckedPrompt {
  if (typeof request.requestId !== "string" || request.requestId === "") throw invalid("requestId must be a non-empty string");
  const { params } = request;
  if (!Number.isInteger(params.n) || params.n < 1) throw invalid(`n must be a positive integer, got ${params.n}`);
  if (!(params.maxTokens >= 1)) throw invalid(`max_tokens must be at least 1, got ${params.maxTokens}`);
  if (request.priority !== undefined && !Number.isFinite(request.priority)) throw invalid(`priority must be a finite number, got ${request.priority}`);
  const ids = request.promptTokenIds;
  if (!Array.isArray(ids)) throw invalid("promptTokenIds must be an array of token ids");
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize) throw invalid(`token id ${id} is outside the model's vocabulary (${config.vocabSize})`);
  }
  const maxLen = config.maxPositionEmbeddings;
  let prompt: number[];
  try {
    prompt = truncatePrompt(ids, params.truncatePromptTokens, maxLen - Math.min(params.maxTokens, maxLen));
  } catch (error) {
    throw invalid((error as Error).message);
  }
  if (prompt.length === 0) throw invalid("The decoder prompt cannot be empty");
  if (prompt.length >= maxLen) {
    throw invalid(`The decoder prompt (length ${prompt.length}) leaves no room for output within the maximum model length of ${maxLen}`);
  }
  return { prompt, maxTokens: Math.min(params.maxTokens, maxLen - prompt.length) };
}
