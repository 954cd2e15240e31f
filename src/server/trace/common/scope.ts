import type { FastifyInstance } from "fastify";
import { TraceError } from "../../../store/trace/errors.js";
import { parseJsonLossless, stringifyJsonLossless } from "../../../trace/json/lossless.js";
import { sendError } from "../../errors.js";
import { installJsonBodyParser } from "../../json-body.js";

/**
 * Routes that store or return user values (objects, tables, refs, v2 resources, evaluations) parse
 * JSON bodies losslessly, so digests see `1.0` and large integers as Python does, and reply with
 * those numbers as they came.
 */
export function useLosslessJson(app: FastifyInstance): void {
  installJsonBodyParser(app, { parse: parseJsonLossless });
  app.setReplySerializer((payload) => stringifyJsonLossless(payload));
}

/**
 * The trace API's error mapping (`docs/api/trace.md#errors`), set once on the scope of every
 * authenticated trace route: the store's deliberate errors become `{"reason": ...}` with their
 * Weave status (and extras such as `deleted_at`); a value PostgreSQL cannot convert while
 * evaluating a query (data exceptions, class 22) is 400. Everything else goes on to the app's handler.
 */
export function useTraceErrors(app: FastifyInstance): void {
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof TraceError) return sendError(reply, "trace", error.status, error.message, { extra: error.extra });
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code)) {
      return sendError(reply, "trace", 400, `The query could not be evaluated on the stored data: ${(error as Error).message}`);
    }
    throw error;
  });
}

/** The documentation and error settings every authenticated trace route shares. */
export function traceRoute(tag: string): { tags: string[]; errorStyle: "trace"; security: "basic" } {
  return { tags: [`trace: ${tag}`], errorStyle: "trace", security: "basic" };
}
