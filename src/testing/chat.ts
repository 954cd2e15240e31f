import { ApiError } from "../server/errors.js";
import { type ChatCompletionRequest, ChatCompletionReq } from "../server/chat/request-schema.js";
import { parseInput } from "../server/validation.js";

/** A parsed chat completion request: one user message plus the given fields, defaults filled by the real schema. */
export function chatRequest(fields: Record<string, unknown> = {}): ChatCompletionRequest {
  return parseInput(ChatCompletionReq, { messages: [{ role: "user", content: "hi" }], ...fields }, "body");
}

export interface ThrownApiError {
  status: number;
  message: string;
  param: string | null | undefined;
  type: string | undefined;
}

/** Runs `action` and returns the ApiError it throws (fails the test when it throws nothing or something else). */
export function apiErrorOf(action: () => unknown): ThrownApiError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message, param: error.options.param, type: error.options.type };
    throw error;
  }
  throw new Error("expected an ApiError, but nothing was thrown");
}

/** As `apiErrorOf`, for async actions. */
export async function asyncApiErrorOf(action: () => Promise<unknown>): Promise<ThrownApiError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message, param: error.options.param, type: error.options.type };
    throw error;
  }
  throw new Error("expected an ApiError, but nothing was thrown");
}
