import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Store } from "../../store/db.js";
import { QueryError, TooLargeError } from "../../store/trace/query/errors.js";
import { canonicalTimestamp } from "../../store/trace/timestamps.js";
import { SqlTraceCallStore, type TraceCallStore } from "../../store/trace/trace-store.js";
import { principalOf } from "../auth.js";
import { ApiError } from "../errors.js";
import { parseInput, RequestValidationError } from "../validation.js";

const stores = new WeakMap<Store, TraceCallStore>();

/** The trace call store over the app's database (one per database). */
export function traceCallStore(app: FastifyInstance): TraceCallStore {
  const store = app.services.store;
  let calls = stores.get(store);
  if (!calls) {
    calls = new SqlTraceCallStore(store);
    stores.set(store, calls);
  }
  return calls;
}

/**
 * `wb_user_id` is server-set from the caller (`spec/trace.md` §1.3): the id of the API key, which
 * names who wrote a call or feedback without revealing the key.
 */
export function traceUserId(request: FastifyRequest): string {
  return principalOf(request).keyId;
}

/**
 * Maps store errors to the trace API's statuses (`spec/trace.md` §1.5): an unrunnable query is 400,
 * data over a limit is 413, and a value the database cannot convert while evaluating a query
 * (PostgreSQL data exceptions, class 22) is 400. Everything else goes to the app's handler.
 */
export function useTraceErrors(app: FastifyInstance): void {
  app.setErrorHandler((error) => {
    if (error instanceof QueryError) throw new ApiError(400, error.message);
    if (error instanceof TooLargeError) throw new ApiError(413, error.message);
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code)) throw new ApiError(400, `The query could not be evaluated on the stored data: ${(error as Error).message}`);
    throw error;
  });
}

/** Parses a nested part of the body so that 422 locations point at it (`["body", ...prefix, ...]`). */
export function parseBodyPart<S extends z.ZodType>(schema: S, value: unknown, prefix: (string | number)[]): z.output<S> {
  try {
    return parseInput(schema, value, "body");
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    throw new RequestValidationError(error.issues.map((issue) => ({ ...issue, loc: ["body", ...prefix, ...issue.loc.slice(1)] })));
  }
}

/** A datetime (ISO-8601, with or without zone, or Unix seconds) as canonical timestamp text. */
export const zTimestamp = z
  .any()
  .transform((value, ctx): string => {
    if (value === undefined) {
      ctx.addIssue({ code: "invalid_type", expected: "string", input: value, message: "Field required" });
      return z.NEVER;
    }
    const canonical = canonicalTimestamp(value);
    if (!canonical) {
      ctx.addIssue({ code: "custom", input: value, message: "Input should be a valid datetime" });
      return z.NEVER;
    }
    return canonical;
  })
  .describe("ISO-8601 date-time");

export const zJsonObject = z.record(z.string(), z.unknown());

/** A list of ids for a filter; lists longer than 1000 are refused by the store with 400. */
export const zIdList = z.array(z.string()).nullish();

export const zSortBy = z.array(z.object({ field: z.string(), direction: z.enum(["asc", "desc"]) }));

/** The project a request names, checked against the caller's entity. */
export const zProjectId = z.string().min(1);
