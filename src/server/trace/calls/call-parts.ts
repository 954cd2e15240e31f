import type { CallEnd, CallStart } from "../../../store/trace/calls/types.js";
import { uuidv7 } from "../../../store/trace/ids.js";
import { canonicalUtcText } from "../../../store/trace/timestamps.js";

/**
 * Reading `upsert_batch` items without the schema, for speed: SDK batches carry thousands of starts
 * and ends, and checking each with zod costs more than storing it. These readers accept only items
 * that the schemas (`CallStartReq`, `CallEndReq`) accept, and give exactly what reading them through
 * the schema gives; anything else — a missing field, another type, a timestamp in another form —
 * returns undefined, and the caller checks that item with the schema, which reports the problem.
 * Tests hold the two paths to the same answers and to the same fields.
 */

/** The fields of `StartedCallSchemaForInsert` and `EndedCallSchemaForInsert` that these readers read. */
export const QUICK_START_FIELDS = ["project_id", "id", "op_name", "display_name", "trace_id", "parent_id", "thread_id", "turn_id", "started_at", "attributes", "inputs", "otel_dump", "wb_user_id", "wb_run_id", "wb_run_step"];
export const QUICK_END_FIELDS = ["project_id", "id", "trace_id", "ended_at", "exception", "output", "summary", "wb_run_step_end"];

type Fields = Record<string, unknown>;

/** A JSON object as zod's record accepts it and copies it unchanged. */
function isRecord(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, "constructor") && !Object.hasOwn(value, "__proto__");
}

const isOptionalString = (value: unknown) => value === undefined || value === null || typeof value === "string";
const isOptionalId = (value: unknown) => value === undefined || value === null || (typeof value === "string" && value.length > 0);
const isOptionalInt = (value: unknown) => value === undefined || value === null || Number.isSafeInteger(value);
const orNull = <T>(value: T | undefined | null): T | null => (value === undefined ? null : value);

/** The start of `{start: {...}}`, or undefined when the schema must look at it. */
export function quickCallStart(req: unknown, wbUserId: string): CallStart | undefined {
  const start = typeof req === "object" && req !== null && !Array.isArray(req) ? (req as Fields).start : undefined;
  if (!isRecord(start)) return undefined;
  const s = start;
  if (typeof s.project_id !== "string" || s.project_id.length === 0 || typeof s.op_name !== "string" || s.op_name.length === 0) return undefined;
  if (!isOptionalId(s.id) || !isOptionalId(s.trace_id) || !isOptionalString(s.display_name) || !isOptionalString(s.parent_id) || !isOptionalString(s.thread_id)) return undefined;
  if (!isOptionalString(s.turn_id) || !isOptionalString(s.wb_user_id) || !isOptionalString(s.wb_run_id) || !isOptionalInt(s.wb_run_step)) return undefined;
  if (!isRecord(s.attributes) || !isRecord(s.inputs) || !(s.otel_dump === undefined || s.otel_dump === null || isRecord(s.otel_dump))) return undefined;
  const startedAt = typeof s.started_at === "string" ? canonicalUtcText(s.started_at) : undefined;
  if (startedAt === undefined) return undefined;
  return {
    projectId: s.project_id,
    id: (s.id as string | null | undefined) ?? uuidv7(),
    traceId: (s.trace_id as string | null | undefined) ?? uuidv7(),
    opName: s.op_name,
    displayName: orNull(s.display_name as string | null | undefined),
    parentId: orNull(s.parent_id as string | null | undefined),
    threadId: orNull(s.thread_id as string | null | undefined),
    turnId: orNull(s.turn_id as string | null | undefined),
    startedAt,
    attributes: s.attributes,
    inputs: s.inputs,
    otelDump: orNull(s.otel_dump),
    wbUserId,
    wbRunId: orNull(s.wb_run_id as string | null | undefined),
    wbRunStep: orNull(s.wb_run_step as number | null | undefined),
  };
}

/** The end of `{end: {...}}`, or undefined when the schema must look at it. */
export function quickCallEnd(req: unknown): CallEnd | undefined {
  const end = typeof req === "object" && req !== null && !Array.isArray(req) ? (req as Fields).end : undefined;
  if (!isRecord(end)) return undefined;
  const e = end;
  if (typeof e.project_id !== "string" || e.project_id.length === 0 || typeof e.id !== "string" || e.id.length === 0) return undefined;
  if (!isOptionalString(e.trace_id) || !isOptionalString(e.exception) || !isOptionalInt(e.wb_run_step_end) || !isRecord(e.summary)) return undefined;
  const endedAt = typeof e.ended_at === "string" ? canonicalUtcText(e.ended_at) : undefined;
  if (endedAt === undefined) return undefined;
  return {
    projectId: e.project_id,
    id: e.id,
    traceId: orNull(e.trace_id as string | null | undefined),
    endedAt,
    exception: orNull(e.exception as string | null | undefined),
    output: e.output === undefined ? null : e.output,
    summary: e.summary,
    wbRunStepEnd: orNull(e.wb_run_step_end as number | null | undefined),
  };
}
