import type { TraceCall } from "../types.js";

/** A call's status as the trace API computes it (summary.weave.status), or from its fields. */
export function statusOf(call: TraceCall): string {
  const weave = (call.summary?.weave ?? {}) as { status?: string };
  return weave.status ?? (call.exception ? "error" : call.ended_at ? "success" : "running");
}

/** Wall time of an ended call. */
export function latency(call: TraceCall): string {
  if (!call.ended_at) return "—";
  const ms = Date.parse(call.ended_at) - Date.parse(call.started_at);
  return Number.isFinite(ms) ? (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`) : "—";
}
