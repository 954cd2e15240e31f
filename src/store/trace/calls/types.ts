import type { JsonText } from "../json-text.js";
import type { Operation, SortBy } from "../query/ast.js";

/** A call's start (`StartedCallSchemaForInsert`), validated and with server-filled ids. */
export interface CallStart {
  projectId: string;
  id: string;
  traceId: string;
  opName: string;
  displayName: string | null;
  parentId: string | null;
  threadId: string | null;
  turnId: string | null;
  /** Canonical timestamp text. */
  startedAt: string;
  attributes: Record<string, unknown>;
  inputs: Record<string, unknown>;
  otelDump: unknown;
  wbUserId: string | null;
  wbRunId: string | null;
  wbRunStep: number | null;
}

/** A call's end (`EndedCallSchemaForInsert`). */
export interface CallEnd {
  projectId: string;
  id: string;
  traceId: string | null;
  endedAt: string;
  exception: string | null;
  output: unknown;
  summary: Record<string, unknown>;
  wbRunStepEnd: number | null;
}

/** One write: a start, an end, or both (a complete call). */
export interface CallWrite {
  start?: CallStart;
  end?: CallEnd;
}

/** `CallsFilter` of `docs/api/trace.md#call-schemas`; lists hold at most 1000 entries, empty lists filter nothing. */
export interface CallsFilter {
  op_names?: string[] | null;
  input_refs?: string[] | null;
  output_refs?: string[] | null;
  parent_ids?: string[] | null;
  trace_ids?: string[] | null;
  call_ids?: string[] | null;
  thread_ids?: string[] | null;
  turn_ids?: string[] | null;
  trace_roots_only?: boolean | null;
  wb_user_ids?: string[] | null;
  wb_run_ids?: string[] | null;
}

export interface CallsQuery {
  projectId: string;
  filter?: CallsFilter | null;
  query?: Operation | null;
  /** Undefined or null: `started_at, id` ascending; an empty list: no order. */
  sortBy?: SortBy[] | null;
  limit?: number | null;
  offset?: number | null;
  /** Top-level columns to return (plus the required ones); undefined: all. */
  columns?: string[] | null;
  includeStorageSize?: boolean;
  includeTotalStorageSize?: boolean;
}

/** A call as the API returns it (`CallSchema`). */
export interface CallSchema {
  id: string;
  project_id: string;
  op_name: string;
  display_name?: string | null;
  trace_id: string;
  parent_id?: string | null;
  thread_id?: string | null;
  turn_id?: string | null;
  started_at: string;
  attributes?: Record<string, unknown>;
  inputs?: Record<string, unknown>;
  ended_at?: string | null;
  exception?: string | null;
  output?: unknown;
  summary?: Record<string, unknown>;
  wb_user_id?: string | null;
  /** The name of the `wb_user_id`'s user; only with `include_usernames`. */
  wb_username?: string;
  wb_run_id?: string | null;
  wb_run_step?: number | null;
  wb_run_step_end?: number | null;
  deleted_at?: string | null;
  storage_size_bytes?: number | null;
  total_storage_size_bytes?: number | null;
}

/** A call on its way into an answer: inputs, output and attributes may be their stored JSON text. */
export type SendableCall = Omit<CallSchema, "attributes" | "inputs"> & {
  attributes?: CallSchema["attributes"] | JsonText;
  inputs?: CallSchema["inputs"] | JsonText;
};
