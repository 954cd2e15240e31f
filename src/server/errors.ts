import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { CursorNotFoundError } from "../store/errors.js";
import { requestCausedDatabaseError } from "./database-errors.js";
import { RequestValidationError, type ValidationIssue } from "./validation.js";

/**
 * How a surface writes errors other than schema failures (docs/api/overview.md#errors):
 * - `detail`: preview API and service routes, `{"detail": "message"}`;
 * - `openai`: chat completions and /v1/models, `{"error": {message, type, param, code}}`;
 * - `trace`: the Weave API, `{"reason": "message"}`;
 * - `anthropic`: the Messages API, `{"type": "error", "error": {"type", "message"}}`.
 * Schema failures are 422 `{"detail": [...]}` on every surface but the Messages API, whose clients
 * know only its own shape: there they are 400 `invalid_request_error`s naming each problem.
 */
export type ErrorStyle = "detail" | "openai" | "trace" | "anthropic";

declare module "fastify" {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
    /** Checks of a route on its raw JSON text as it arrives, before the text is parsed (`RouteSpec.prescan`). */
    prescan?: () => { feed(chunk: string): void; end(): void };
  }
}

/** An error with a deliberate status and a message safe to show the caller. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly options: { param?: string | null; type?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

export const notFound = (message: string, param?: string) => new ApiError(404, message, { param, type: "NotFoundError" });
export const conflict = (message: string) => new ApiError(409, message, { type: "ConflictError" });
export const badRequest = (message: string, param?: string | null) => new ApiError(400, message, { param: param ?? null, type: "BadRequestError" });

const OPENAI_TYPES: Record<number, string> = {
  400: "BadRequestError",
  401: "AuthenticationError",
  403: "PermissionDeniedError",
  404: "NotFoundError",
  405: "MethodNotAllowedError",
  409: "ConflictError",
  413: "RequestTooLargeError",
  415: "BadRequestError",
  422: "UnprocessableEntityError",
  429: "RateLimitError",
  500: "InternalServerError",
  501: "NotImplementedError",
  503: "ServiceUnavailableError",
};

/** Anthropic's error types by status (its API's documented set). */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
  529: "overloaded_error",
};

export function errorBody(style: ErrorStyle, status: number, message: string, options: ApiError["options"] = {}): Record<string, unknown> {
  switch (style) {
    case "anthropic":
      return { type: "error", error: { type: ANTHROPIC_TYPES[status] ?? (status < 500 ? "invalid_request_error" : "api_error"), message } };
    case "openai":
      return { error: { message, type: options.type ?? OPENAI_TYPES[status] ?? "Error", param: options.param ?? null, code: status }, ...options.extra };
    case "trace":
      return { reason: message, ...options.extra };
    default:
      return { detail: message, ...options.extra };
  }
}

export function sendValidationError(reply: FastifyReply, issues: ValidationIssue[], style: ErrorStyle = "detail"): FastifyReply {
  if (style === "anthropic") {
    const message = issues.map((issue) => `${issue.loc.filter((part) => part !== "body").join(".") || "body"}: ${issue.msg}`).join("; ");
    return reply.code(400).send(errorBody("anthropic", 400, message));
  }
  return reply.code(422).send({ detail: issues });
}

export function sendError(reply: FastifyReply, style: ErrorStyle, status: number, message: string, options: ApiError["options"] = {}): FastifyReply {
  if (options.headers) reply.headers(options.headers);
  return reply.code(status).send(errorBody(style, status, message, options));
}

/** Maps every thrown error to its documented shape; only unexpected errors become a bare 500. */
export function installErrorHandler(app: FastifyInstance, styleForUrl: (url: string) => ErrorStyle): void {
  app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const style = request.routeOptions.config?.errorStyle ?? styleForUrl(request.url);
    if (error instanceof RequestValidationError) return sendValidationError(reply, error.issues, style);
    if (error instanceof CursorNotFoundError) {
      return sendValidationError(reply, [{ loc: ["query", "after"], msg: error.message, type: "value_error" }]);
    }
    if (error instanceof ApiError) return sendError(reply, style, error.status, error.message, error.options);

    const code = (error as FastifyError).code;
    const statusCode = (error as FastifyError).statusCode;
    if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return sendError(reply, style, 415, "Unsupported Media Type: Only 'application/json' is allowed");
    }
    if (code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendError(reply, style, 413, "Request body too large");
    if (code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
      return sendValidationError(reply, [{ loc: ["body"], msg: "Field required", type: "missing" }], style);
    }
    if (error instanceof SyntaxError || code === "FST_ERR_CTP_INVALID_JSON_BODY") {
      return sendValidationError(reply, [{ loc: ["body"], msg: `JSON decode error: ${error.message}`, type: "json_invalid" }], style);
    }
    if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
      return sendError(reply, style, statusCode, error.message);
    }
    const databaseProblem = requestCausedDatabaseError(error);
    if (databaseProblem !== undefined) return sendError(reply, style, 400, databaseProblem);
    request.log.error({ err: error }, "unhandled error");
    return sendError(reply, style, 500, "Internal server error");
  });
}
