import { ApiError } from "../../errors.js";
import { parseInput } from "../../validation.js";
import { withChatErrors } from "../common/engine-errors.js";
import { classifyModelName, resolveModel } from "../models/model-resolver.js";
import { type PrepareContext, prepareCompletion } from "../pipeline/prepare.js";
import { type ChatCompletionRequest, ChatCompletionReq, type ChatCompletionResponse } from "./protocol.js";
import { collectCompletion } from "./response.js";

/**
 * Chat completions for other parts of the service (evaluations run models through this): the same
 * validation, model resolution, template rendering and engine call as `POST /v1/chat/completions`
 * without `stream`, and the same response body. Failures are the endpoint's errors (`ApiError`
 * with its status and message, or a schema failure).
 */

/** A request body validated by the endpoint's own schema (defaults filled). */
export function chatRequestOf(body: Record<string, unknown>): ChatCompletionRequest {
  return parseInput(ChatCompletionReq, body, "body");
}

/** The whole completion, as the endpoint answers a request without `stream`. */
export async function completeChat(req: ChatCompletionRequest, ctx: PrepareContext, signal?: AbortSignal): Promise<ChatCompletionResponse> {
  const prepared = await prepareCompletion({ ...req, stream: false }, ctx);
  return collectCompletion(withChatErrors(prepared.engine.generate({ ...prepared.generate, signal })), prepared.plan);
}

/**
 * Checks, without generating, that a model name would run: it names a served base model or one
 * of the caller's trained models (404 otherwise, as the endpoint answers), and an engine is there (503).
 */
export async function checkChatModel(model: string, ctx: PrepareContext): Promise<void> {
  await resolveModel(classifyModelName(model, ctx.resolver.catalog), ctx.entity, ctx.resolver);
  if (!ctx.engines) throw new ApiError(503, "No inference engine is available on this server.", { type: "ServiceUnavailableError" });
}
