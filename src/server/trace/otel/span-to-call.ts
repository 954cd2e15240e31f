import { createHash } from "node:crypto";
import type { CallEnd, CallStart } from "../../../store/trace/calls/types.js";
import { canonicalTimestamp, formatTimestamp, type Instant } from "../../../store/trace/timestamps.js";
import { expandAttributes, firstOf, getAttribute, mapped, numericKeysToLists, truthy } from "./attributes.js";
import { ATTRIBUTE_KEYS, INPUT_KEYS, MAX_DISPLAY_NAME_LENGTH, MAX_OP_NAME_LENGTH, OUTPUT_KEYS, SPAN_OVERRIDES, USAGE_KEYS, WB_KEYS } from "./conventions.js";
import { shortenName } from "./names.js";
import type { OtlpResourceSpans, OtlpSpan } from "./types.js";

const SPAN_KINDS = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const STATUS_CODES = ["UNSET", "OK", "ERROR"];
const STATUS_ERROR = 2;

type Dict = Record<string, unknown>;
const isDict = (value: unknown): value is Dict => value !== null && typeof value === "object" && !Array.isArray(value);

function instantOfNanos(nanos: bigint): Instant {
  return { ms: Number(nanos / 1_000_000n), micro: Number((nanos / 1000n) % 1000n) };
}

/** `langfuse.startTime`-style overrides: ISO text, Unix nanoseconds (large integers) or seconds. */
function overrideTime(value: unknown): string | undefined {
  if (typeof value === "string") return canonicalTimestamp(value);
  if (typeof value === "number" && Number.isFinite(value)) return value > 1e14 ? formatTimestamp(instantOfNanos(BigInt(Math.trunc(value)))) : canonicalTimestamp(value);
  return undefined;
}

const intOrNull = (value: unknown): number | null => (typeof value === "number" && Number.isInteger(value) && value !== 0 ? value : typeof value === "string" && /^-?\d+$/.test(value) && Number(value) !== 0 ? Number(value) : null);

/**
 * One span as one complete call (`docs/api/trace.md#otel`, Weave's `python_spans.Span.to_call`): ids
 * from the span and trace ids, inputs, outputs, usage and attributes from the conventions, the whole
 * span kept as `otel_dump`. Throws AttributePathConflictError for attributes that cannot be nested.
 */
export function spanToCall(span: OtlpSpan, resource: OtlpResourceSpans["resource"], projectId: string, wbUserId: string): { start: CallStart; end: CallEnd } {
  const attributes = expandAttributes(span.attributes);
  const events = span.events.map((event) => ({
    name: event.name,
    timestamp: formatTimestamp(instantOfNanos(event.timeUnixNano)),
    attributes: expandAttributes(event.attributes),
    dropped_attributes_count: event.droppedAttributesCount,
  }));
  // Event attributes are found under `events.<name>`, after the span's own attributes.
  const lookup: Dict = { ...attributes };
  for (const event of events) {
    const key = `events.${event.name}`;
    if (!(key in attributes)) lookup[key] = [...((lookup[key] as unknown[] | undefined) ?? []), event.attributes];
  }

  const usage = mapped(attributes, USAGE_KEYS);
  for (const [a, b] of [
    ["prompt_tokens", "completion_tokens"],
    ["input_tokens", "output_tokens"],
  ] as const) {
    if (!("total_tokens" in usage) && Number.isInteger(usage[a]) && Number.isInteger(usage[b])) usage.total_tokens = (usage[a] as number) + (usage[b] as number);
  }

  let inputs: unknown = firstOf(lookup, INPUT_KEYS);
  const inputKeys = Object.keys(inputs as Dict);
  if (inputKeys.length === 1) {
    const nested = (inputs as Dict).inputs ?? (inputs as Dict).input;
    if (isDict(nested)) inputs = nested;
  }
  let outputs: unknown = firstOf(lookup, OUTPUT_KEYS);
  if (Object.keys(outputs as Dict).length === 1) {
    const nested = truthy((outputs as Dict).outputs) ? (outputs as Dict).outputs : (outputs as Dict).output;
    if (nested !== undefined && nested !== null) outputs = nested;
  }

  let callAttributes = mapped(attributes, ATTRIBUTE_KEYS);
  const wandb = mapped(attributes, WB_KEYS);
  const model = (callAttributes.model as string | undefined) || (isDict(callAttributes.model_parameters) ? (callAttributes.model_parameters.model as string | undefined) : undefined);
  const extracted = Object.keys(callAttributes).length > 0 || Object.keys(inputs as Dict).length > 0 || truthy(outputs) || typeof outputs === "number" || Object.keys(usage).length > 0;
  if (isDict(wandb.attributes)) callAttributes = { ...callAttributes, ...wandb.attributes };
  // With nothing recognised, all span attributes are kept as the call's attributes.
  if (!extracted) callAttributes = attributes;

  let opName = span.name;
  if ([...opName].length >= MAX_OP_NAME_LENGTH) {
    const identifier = createHash("sha256").update(opName, "utf8").digest("hex").slice(0, 4);
    opName = shortenName(opName, MAX_OP_NAME_LENGTH, `:${identifier}`, false);
  }
  let displayName = typeof wandb.display_name === "string" ? wandb.display_name : null;
  if (displayName && [...displayName].length >= MAX_DISPLAY_NAME_LENGTH) displayName = shortenName(displayName, MAX_DISPLAY_NAME_LENGTH);
  const threadId = typeof wandb.thread_id === "string" && wandb.thread_id ? wandb.thread_id : null;
  const runId = typeof wandb.wb_run_id === "string" && !wandb.wb_run_id.includes("/") && !wandb.wb_run_id.includes(":") ? `${projectId}:${wandb.wb_run_id}` : null;

  const startedAt = overrideTime(getAttribute(attributes, SPAN_OVERRIDES.start_time)) ?? formatTimestamp(instantOfNanos(span.startTimeUnixNano));
  const endedAt = overrideTime(getAttribute(attributes, SPAN_OVERRIDES.end_time)) ?? formatTimestamp(instantOfNanos(span.endTimeUnixNano));
  const isError = span.status.code === STATUS_ERROR;
  const summary: Dict = {
    weave: { status: isError ? "error" : "success", latency_ms: Number((span.endTimeUnixNano - span.startTimeUnixNano) / 1_000_000n), trace_name: opName },
  };
  if (Object.keys(usage).length > 0) summary.usage = { [model || "usage"]: usage };

  const otelDump = {
    name: span.name,
    context: { trace_id: span.traceId, span_id: span.spanId, trace_state: span.traceState },
    kind: SPAN_KINDS[span.kind] ?? "UNSPECIFIED",
    parent_id: span.parentSpanId || null,
    start_time: formatTimestamp(instantOfNanos(span.startTimeUnixNano)),
    end_time: formatTimestamp(instantOfNanos(span.endTimeUnixNano)),
    status: { code: STATUS_CODES[span.status.code] ?? "UNSET", message: span.status.message },
    attributes,
    events,
    links: span.links.map((link) => ({
      trace_id: link.traceId,
      span_id: link.spanId,
      trace_state: link.traceState,
      attributes: expandAttributes(link.attributes),
      dropped_attributes_count: link.droppedAttributesCount,
      flags: link.flags,
    })),
    resource: { attributes: expandAttributes(resource.attributes), dropped_attributes_count: resource.droppedAttributesCount },
  };

  return {
    start: {
      projectId,
      id: span.spanId,
      traceId: span.traceId,
      opName,
      displayName,
      parentId: span.parentSpanId || null,
      threadId,
      turnId: threadId && truthy(wandb.is_turn) ? span.spanId : null,
      startedAt,
      attributes: callAttributes,
      inputs: inputs as Dict,
      otelDump,
      wbUserId,
      wbRunId: runId,
      wbRunStep: intOrNull(wandb.wb_run_step),
    },
    end: {
      projectId,
      id: span.spanId,
      traceId: span.traceId,
      endedAt,
      exception: isError ? span.status.message : null,
      output: numericKeysToLists(outputs),
      summary,
      wbRunStepEnd: intOrNull(wandb.wb_run_step_end),
    },
  };
}
