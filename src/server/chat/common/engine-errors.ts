import type { GenerateEvent } from "../../../engine/api.js";
import { EngineError } from "../../../engine/runtime/errors.js";
import { ApiError } from "../../errors.js";

/**
 * Engine failures as the chat endpoint answers them: a request the engine refuses or a feature it
 * lacks is the request's problem (400, with the engine's message); an engine that stopped or is
 * shutting down is 503 (try again); a model whose weights are not finite is 409 (the model's state,
 * not the request, is at fault, and retrying cannot help). Anything else stays an internal error
 * (500, message hidden).
 */
export function chatErrorOf(error: unknown): unknown {
  if (!(error instanceof EngineError)) return error;
  switch (error.kind) {
    case "invalid_request":
    case "unsupported":
      return new ApiError(400, error.message, { type: "BadRequestError" });
    case "non_finite_model":
      return new ApiError(409, error.message, { type: "ConflictError" });
    case "worker_failed":
    case "closed":
      return new ApiError(503, error.message, { type: "ServiceUnavailableError" });
    default:
      return error;
  }
}

/** The engine's event stream with its failures mapped by `chatErrorOf`. */
export async function* withChatErrors(events: AsyncIterable<GenerateEvent>): AsyncIterable<GenerateEvent> {
  try {
    yield* events;
  } catch (error) {
    throw chatErrorOf(error);
  }
}
