import { z } from "zod";
import { isJsonObject } from "../../../store/trace/object-class.js";
import { canonicalTimestamp } from "../../../store/trace/timestamps.js";
import { parseInput, RequestValidationError } from "../../validation.js";

/** Request pieces every trace route shares. Unknown fields are ignored, as Weave does. */

export const ProjectId = z.string().min(1).describe("The project as 'entity/project'");

/** Text that names or refers to something (ids, op names, refs): indexed, so bounded, and never a NUL, which PostgreSQL text cannot hold. */
export function boundedName(max: number) {
  return z
    .string()
    .max(max)
    .refine((value) => !value.includes("\u0000"), { message: "must not contain a NUL character (\\u0000)" });
}

/** Ids (call, trace, parent, thread, turn, feedback) and op names: at most 1024 characters (docs/decisions/server.md#D-SRV-012). */
export const TraceId = boundedName(1024);
/** Refs (`weave:///…`): at most 4096 characters. */
export const TraceRef = boundedName(4096);

/** Any JSON value, but present. */
export const RequiredJson = z.unknown().nonoptional();

/** A JSON object, kept as parsed (no copy), so lossless numbers and key order survive. */
export const JsonDict = z.custom<Record<string, unknown>>((value) => value === undefined || isJsonObject(value), { message: "Input should be a valid dictionary" }).nonoptional();

/** A JSON object (copied by the parser; for routes that do not keep number spellings). */
export const JsonObject = z.record(z.string(), z.unknown());

export const SortBy = z.object({ field: z.string(), direction: z.enum(["asc", "desc"]) });
export const SortByList = z.array(SortBy);

export const Limit = z.number().int().min(0).nullish();
export const Offset = z.number().int().min(0).nullish();

/** Optional in the request; null means the same as absent. */
export const OptionalString = z.string().nullish();
export const StringList = z.array(z.string());

/** A list of ids for a filter; lists longer than 1000 are refused by the store with 400. */
export const IdList = z.array(z.string()).nullish();

/** A datetime (ISO-8601, with or without zone, or Unix seconds) as canonical timestamp text. */
export const Timestamp = z
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

/** `{}`: the answer of a write that has nothing to report. */
export const EmptyRes = z.object({}).strict();

/** Parses a nested part of the body so that 422 locations point at it (`["body", ...prefix, ...]`). */
export function parseBodyPart<S extends z.ZodType>(schema: S, value: unknown, prefix: (string | number)[]): z.output<S> {
  try {
    return parseInput(schema, value, "body");
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    throw new RequestValidationError(error.issues.map((issue) => ({ ...issue, loc: ["body", ...prefix, ...issue.loc.slice(1)] })));
  }
}
