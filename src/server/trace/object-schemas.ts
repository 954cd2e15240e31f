import { z } from "zod";
import { isJsonObject } from "../../store/trace/object-class.js";

/** Shared request pieces of the trace-object routes (unknown fields are ignored, as Weave does). */

export const ProjectId = z.string().describe("The project as 'entity/project'");

/** Any JSON value, but present. */
export const RequiredJson = z.unknown().nonoptional();

/** A JSON object, kept as parsed (no copy), so lossless numbers and key order survive. */
export const JsonDict = z.custom<Record<string, unknown>>((value) => value === undefined || isJsonObject(value), { message: "Input should be a valid dictionary" }).nonoptional();

export const SortBy = z.object({ field: z.string(), direction: z.enum(["asc", "desc"]) });

export const Limit = z.number().int().min(0).nullish();
export const Offset = z.number().int().min(0).nullish();

/** Optional in the request; null means the same as absent. */
export const OptionalString = z.string().nullish();
export const StringList = z.array(z.string());
