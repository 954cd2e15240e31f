import type { FastifyInstance, FastifyRequest } from "fastify";
import { TraceError } from "../../store/trace/errors.js";
import { parseJsonLossless, stringifyJsonLossless } from "../../store/trace/json/lossless.js";
import { principalOf } from "../auth.js";
import { sendError } from "../errors.js";

/**
 * Prepares a plugin scope of the trace API that stores or returns user values (objects, tables,
 * refs, files, annotation queues, v2 resources):
 * - JSON bodies are parsed losslessly, so digests see `1.0` and large integers as Python does;
 * - replies keep those numbers as they came;
 * - the store's deliberate errors become `{"reason": ...}` with their Weave status; anything else
 *   goes on to the app's error handler.
 */
export function useTraceObjectScope(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(Object.assign(new Error("Body cannot be empty when content-type is set to 'application/json'"), { code: "FST_ERR_CTP_EMPTY_JSON_BODY", statusCode: 400 }));
      return;
    }
    try {
      done(null, parseJsonLossless(text));
    } catch (error) {
      done(error as Error);
    }
  });
  app.setReplySerializer((payload) => stringifyJsonLossless(payload));
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof TraceError) return sendError(reply, "trace", error.status, error.message, { extra: error.extra });
    throw error;
  });
}

/**
 * The `wb_user_id` Weave records for writes. Flywheel has no users apart from API keys, so the
 * caller's key id stands for the user; request bodies never set it.
 */
export function wbUserIdOf(request: FastifyRequest): string {
  return principalOf(request).keyId;
}

/** The documentation and error settings every authenticated trace route shares. */
export function traceRoute(tag: string): { tags: string[]; errorStyle: "trace"; security: "basic" } {
  return { tags: [`trace: ${tag}`], errorStyle: "trace", security: "basic" };
}
