import { refName } from "../refs.js";
import { millisBetween } from "../timestamps.js";
import { JsonText } from "../json-text.js";
import type { CallSchema, SendableCall } from "./types.js";

/** Every CallSchema column stored on a call row, in response order. */
export const CALL_FIELDS = [
  "id",
  "project_id",
  "op_name",
  "display_name",
  "trace_id",
  "parent_id",
  "thread_id",
  "turn_id",
  "started_at",
  "attributes",
  "inputs",
  "ended_at",
  "exception",
  "output",
  "summary",
  "wb_user_id",
  "wb_run_id",
  "wb_run_step",
  "wb_run_step_end",
  "deleted_at",
] as const;
export type CallField = (typeof CALL_FIELDS)[number];

const REQUIRED_FIELDS: CallField[] = ["id", "trace_id", "project_id", "op_name", "started_at"];
const JSON_FIELDS = new Set<string>(["attributes", "inputs", "output", "summary"]);

/**
 * The columns a query returns (`docs/api/trace.md#calls` columns): the first segment of each requested
 * name, plus the required ones; summary (or costs) also needs what the derived summary reads.
 */
export function selectedFields(columns: string[] | null | undefined, includeCosts: boolean): CallField[] {
  if (!columns || columns.length === 0) return [...CALL_FIELDS];
  const wanted = new Set<string>(columns.map((column) => column.split(".")[0]!));
  if (includeCosts) wanted.add("summary");
  if (wanted.has("summary")) for (const field of ["ended_at", "exception", "display_name"]) wanted.add(field);
  for (const field of REQUIRED_FIELDS) wanted.add(field);
  return CALL_FIELDS.filter((field) => wanted.has(field));
}

const parseJson = (text: unknown): unknown => (typeof text === "string" ? JSON.parse(text) : (text ?? null));

/**
 * Stored JSON columns a call answer can carry as their text (`JsonText`): all but summary, which is
 * derived. Attributes only when they are an object and no OpenTelemetry span joins them.
 */
function keepsText(field: CallField, value: unknown, row: Record<string, unknown>): value is string {
  if (typeof value !== "string") return false;
  switch (field) {
    case "output":
      return true;
    case "inputs":
      return value.startsWith("{");
    case "attributes":
      return value.startsWith("{") && typeof row.otel_dump !== "string";
    default:
      return false;
  }
}

/**
 * A stored row (selected columns, plus otel_dump and sizes when asked) as the API's CallSchema.
 * With `jsonAsText`, inputs, output and attributes stay their stored text (`SendableCall`).
 */
export function toCallSchema(row: Record<string, unknown>, fields: readonly CallField[]): CallSchema;
export function toCallSchema(row: Record<string, unknown>, fields: readonly CallField[], jsonAsText: true): SendableCall;
export function toCallSchema(row: Record<string, unknown>, fields: readonly CallField[], jsonAsText = false): CallSchema | SendableCall {
  const call: Record<string, unknown> = {};
  for (const field of fields) {
    const value = row[field];
    if (!JSON_FIELDS.has(field)) call[field] = value ?? null;
    else call[field] = jsonAsText && keepsText(field, value, row) ? new JsonText(value) : parseJson(value);
  }
  if (call.display_name === "") call.display_name = null;
  if (!("attributes" in call)) call.attributes = {};
  else if (call.attributes === null || typeof call.attributes !== "object") call.attributes = {};
  if (!("inputs" in call) || call.inputs === null) call.inputs = {};
  if (typeof row.otel_dump === "string") (call.attributes as Record<string, unknown>).otel_span = JSON.parse(row.otel_dump);
  if (fields.includes("summary")) {
    call.summary = deriveSummary(call.summary, {
      opName: row.op_name as string,
      startedAt: row.started_at as string,
      endedAt: (row.ended_at as string | null) ?? null,
      exception: (row.exception as string | null) ?? null,
      displayName: (row.display_name as string | null) || null,
    });
  }
  if ("storage_size_bytes" in row) call.storage_size_bytes = row.storage_size_bytes === null ? null : Number(row.storage_size_bytes);
  if ("total_storage_size_bytes" in row) call.total_storage_size_bytes = row.total_storage_size_bytes === null ? null : Number(row.total_storage_size_bytes);
  return call as unknown as CallSchema;
}

interface SummaryInputs {
  opName: string;
  startedAt: string;
  endedAt: string | null;
  exception: string | null;
  displayName: string | null;
}

/** The server-derived `summary.weave` block (status, latency, trace name), replacing stored copies. */
export function deriveSummary(stored: unknown, call: SummaryInputs): Record<string, unknown> {
  const summary: Record<string, unknown> = stored !== null && typeof stored === "object" && !Array.isArray(stored) ? { ...(stored as Record<string, unknown>) } : {};
  const storedWeave = summary.weave;
  delete summary.weave;
  const weave: Record<string, unknown> = storedWeave !== null && typeof storedWeave === "object" && !Array.isArray(storedWeave) ? { ...(storedWeave as Record<string, unknown>) } : {};
  for (const key of ["status", "trace_name", "latency_ms", "display_name"]) delete weave[key];

  const statusCounts = summary.status_counts as Record<string, unknown> | undefined;
  const descendantErrors = Number(statusCounts && typeof statusCounts === "object" ? statusCounts.error : 0);
  weave.status = call.exception !== null ? "error" : call.endedAt === null ? "running" : descendantErrors > 0 ? "descendant_error" : "success";
  if (call.endedAt !== null) weave.latency_ms = millisBetween(call.startedAt, call.endedAt);
  if (call.displayName) weave.display_name = call.displayName;
  else weave.trace_name = refName(call.opName) ?? call.opName;
  summary.weave = weave;
  return summary;
}
