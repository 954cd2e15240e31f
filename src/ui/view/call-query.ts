/**
 * The trace API request of the call list, from the page's URL state: op, status, roots only and a
 * text search (case-insensitive, over op name, display name, inputs and output).
 */
import { isSearchTooShort } from "./call-count.js";

export interface CallFilters {
  op?: string;
  status?: "success" | "error" | "running";
  rootsOnly: boolean;
  text?: string;
  /** Started at or after / before this instant (ISO 8601). */
  from?: string;
  to?: string;
  /** The call's newest reaction (feedback type wandb.reaction.1) is this emoji. */
  reaction?: string;
}

/** The reactions the UI adds and filters by. */
export const REACTIONS = ["👍", "👎"];

export interface CallQueryBody {
  project_id: string;
  filter: Record<string, unknown>;
  query?: { $expr: Record<string, unknown> };
}

export function callFiltersFromQuery(query: Record<string, string>): CallFilters {
  const status = query.status;
  return {
    ...(query.op ? { op: query.op } : {}),
    ...(status === "success" || status === "error" || status === "running" ? { status } : {}),
    rootsOnly: query.roots === "1",
    // A search shorter than the trigram index can look up is not sent (the page says so).
    ...(query.q && !isSearchTooShort(query.q) ? { text: query.q } : {}),
    ...(isInstant(query.from) ? { from: query.from } : {}),
    ...(isInstant(query.to) ? { to: query.to } : {}),
    ...(query.reaction && REACTIONS.includes(query.reaction) ? { reaction: query.reaction } : {}),
  };
}

/** `op` is an op's name (`weave:///entity/project/op/NAME:*` matches every version of it). */
export function callQueryBody(projectId: string, filters: CallFilters): CallQueryBody {
  const filter: Record<string, unknown> = {};
  if (filters.op) filter.op_names = [`weave:///${projectId}/op/${filters.op}:*`];
  if (filters.rootsOnly) filter.trace_roots_only = true;
  const conditions: Record<string, unknown>[] = [];
  if (filters.status) conditions.push({ $eq: [{ $getField: "summary.weave.status" }, { $literal: filters.status }] });
  if (filters.from) conditions.push({ $gte: [{ $getField: "started_at" }, { $literal: filters.from }] });
  if (filters.to) conditions.push({ $lt: [{ $getField: "started_at" }, { $literal: filters.to }] });
  if (filters.reaction) conditions.push({ $eq: [{ $getField: "feedback.[wandb.reaction.1].payload.emoji" }, { $literal: filters.reaction }] });
  if (filters.text) {
    const contains = (field: string) => ({ $contains: { input: { $getField: field }, substr: { $literal: filters.text }, case_insensitive: true } });
    conditions.push({ $or: ["op_name", "display_name", "inputs", "output"].map(contains) });
  }
  const body: CallQueryBody = { project_id: projectId, filter };
  if (conditions.length === 1) body.query = { $expr: conditions[0]! };
  if (conditions.length > 1) body.query = { $expr: { $and: conditions } };
  return body;
}

/** The op's short name out of an op ref (`weave:///e/p/op/name:digest` → name). */
export function opDisplayName(opName: string): string {
  const match = /^weave:\/\/\/[^/]+\/[^/]+\/op\/([^:]+)(?::.*)?$/.exec(opName);
  return match ? match[1]! : opName;
}

function isInstant(value: string | undefined): value is string {
  return value !== undefined && !Number.isNaN(Date.parse(value));
}

/** A `datetime-local` input's value (local time) as an ISO instant, and back. */
export function localInputToIso(value: string): string | undefined {
  const time = Date.parse(value);
  return value && !Number.isNaN(time) ? new Date(time).toISOString() : undefined;
}

export function isoToLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
