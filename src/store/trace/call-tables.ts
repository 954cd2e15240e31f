import type { Kysely } from "kysely";
import type { Database } from "../schema.js";

/**
 * Row types of the trace tables for calls, feedback and costs (migration 003). JSON values are
 * stored as JSON text on both dialects, so a read returns exactly what was written (key order and
 * number spelling included); timestamps are fixed-width ISO-8601 UTC strings with microseconds
 * (`2024-05-01T12:00:00.123456Z`), which sort as text.
 */

export interface TraceCallsTable {
  project_id: string;
  id: string;
  /** Null until the call's start has arrived (an end may come first). */
  op_name: string | null;
  display_name: string | null;
  trace_id: string | null;
  parent_id: string | null;
  thread_id: string | null;
  turn_id: string | null;
  started_at: string | null;
  ended_at: string | null;
  attributes: string | null;
  inputs: string | null;
  output: string | null;
  summary: string | null;
  exception: string | null;
  otel_dump: string | null;
  wb_user_id: string | null;
  wb_run_id: string | null;
  wb_run_step: number | null;
  wb_run_step_end: number | null;
  deleted_at: string | null;
}

/** Object refs (`weave:///...`) found in a call's inputs or output, for the ref filters. */
export interface TraceCallRefsTable {
  project_id: string;
  call_id: string;
  direction: "input" | "output";
  ref: string;
}

export interface TraceFeedbackTable {
  project_id: string;
  id: string;
  weave_ref: string;
  wb_user_id: string | null;
  creator: string | null;
  created_at: string;
  feedback_type: string;
  payload: string;
  annotation_ref: string | null;
  runnable_ref: string | null;
  call_ref: string | null;
  trigger_ref: string | null;
  queue_id: string | null;
  scorer_tags: string;
  scorer_tag_reasons: string;
  scorer_tag_confidences: string;
  scorer_ratings: string;
  scorer_rating_reasons: string;
  scorer_rating_confidences: string;
  span_agent_name: string;
  span_agent_version: string;
  span_status_code: string;
  span_conversation_id: string;
  span_trace_id: string;
  scorer_trace_id: string;
}

/** LLM token prices: `pricing_level` "project" (id = project_id) or "default" (id "default", global). */
export interface TraceCostsTable {
  id: string;
  pricing_level: string;
  pricing_level_id: string;
  provider_id: string;
  llm_id: string;
  effective_date: string;
  prompt_token_cost: number;
  completion_token_cost: number;
  cache_read_input_token_cost: number;
  cache_creation_input_token_cost: number;
  prompt_token_cost_unit: string;
  completion_token_cost_unit: string;
  created_by: string | null;
  created_at: string;
}

// A type alias (not an interface) so Kysely's withTables accepts it.
export type TraceCallsTables = {
  trace_calls: TraceCallsTable;
  trace_call_refs: TraceCallRefsTable;
  trace_feedback: TraceFeedbackTable;
  trace_costs: TraceCostsTable;
};

export type TraceDb = Kysely<Database & TraceCallsTables>;

/** The store's database seen with the trace tables. */
export function traceDb(db: Kysely<Database>): TraceDb {
  return db.withTables<TraceCallsTables>();
}
