import { type Kysely, PostgresAdapter, sql } from "kysely";

/**
 * Trace calls, their object refs, feedback and LLM prices (`docs/api/trace.md#call-schemas`,
 * `docs/api/trace.md#feedback-schema`, `docs/api/trace.md#costs`). Calls are keyed by (project_id, id): ids
 * are client-chosen, so two projects may reuse one. The indexes serve the common reads: a project's calls by
 * start time, one trace, the children of a call (and the roots), an op's calls, a thread's turns.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // PostgreSQL text compares by the database's locale; "C" makes order and range comparisons
  // bytewise, as on SQLite, so both dialects sort names, ids and timestamps alike.
  const text = db.getExecutor().adapter instanceof PostgresAdapter ? sql`text COLLATE "C"` : sql`text`;
  await db.schema
    .createTable("trace_calls")
    .addColumn("project_id", text, (col) => col.notNull())
    .addColumn("id", text, (col) => col.notNull())
    .addColumn("op_name", "text")
    .addColumn("display_name", "text")
    .addColumn("trace_id", "text")
    .addColumn("parent_id", "text")
    .addColumn("thread_id", "text")
    .addColumn("turn_id", "text")
    .addColumn("started_at", "text")
    .addColumn("ended_at", "text")
    .addColumn("attributes", "text")
    .addColumn("inputs", "text")
    .addColumn("output", "text")
    .addColumn("summary", "text")
    .addColumn("exception", "text")
    .addColumn("otel_dump", "text")
    .addColumn("wb_user_id", "text")
    .addColumn("wb_run_id", "text")
    .addColumn("wb_run_step", "bigint")
    .addColumn("wb_run_step_end", "bigint")
    .addColumn("deleted_at", "text")
    .addPrimaryKeyConstraint("trace_calls_pk", ["project_id", "id"])
    .execute();
  // Partial indexes over live, started calls (every read asks for both), with started_at and id
  // last so that each one also yields its rows in the default order without sorting.
  const live = (index: string, columns: string[]) =>
    db.schema
      .createIndex(index)
      .on("trace_calls")
      .columns(["project_id", ...columns])
      .where(sql.ref("deleted_at"), "is", null)
      .where(sql.ref("op_name"), "is not", null)
      .execute();
  await live("trace_calls_started", ["started_at", "id"]);
  await live("trace_calls_trace", ["trace_id", "started_at", "id"]);
  await live("trace_calls_parent", ["parent_id", "started_at", "id"]);
  await live("trace_calls_op", ["op_name", "started_at", "id"]);
  await live("trace_calls_thread", ["thread_id"]);

  await db.schema
    .createTable("trace_call_refs")
    .addColumn("project_id", text, (col) => col.notNull())
    .addColumn("call_id", text, (col) => col.notNull())
    .addColumn("direction", text, (col) => col.notNull())
    .addColumn("ref", text, (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_call_refs_pk", ["project_id", "ref", "direction", "call_id"])
    .execute();

  await db.schema
    .createTable("trace_feedback")
    .addColumn("project_id", text, (col) => col.notNull())
    .addColumn("id", text, (col) => col.notNull())
    .addColumn("weave_ref", text, (col) => col.notNull())
    .addColumn("wb_user_id", "text")
    .addColumn("creator", "text")
    .addColumn("created_at", text, (col) => col.notNull())
    .addColumn("feedback_type", text, (col) => col.notNull())
    .addColumn("payload", text, (col) => col.notNull())
    .addColumn("annotation_ref", "text")
    .addColumn("runnable_ref", "text")
    .addColumn("call_ref", "text")
    .addColumn("trigger_ref", "text")
    .addColumn("queue_id", "text")
    .addColumn("scorer_tags", text, (col) => col.notNull())
    .addColumn("scorer_tag_reasons", text, (col) => col.notNull())
    .addColumn("scorer_tag_confidences", text, (col) => col.notNull())
    .addColumn("scorer_ratings", text, (col) => col.notNull())
    .addColumn("scorer_rating_reasons", text, (col) => col.notNull())
    .addColumn("scorer_rating_confidences", text, (col) => col.notNull())
    .addColumn("span_agent_name", text, (col) => col.notNull())
    .addColumn("span_agent_version", text, (col) => col.notNull())
    .addColumn("span_status_code", text, (col) => col.notNull())
    .addColumn("span_conversation_id", text, (col) => col.notNull())
    .addColumn("span_trace_id", text, (col) => col.notNull())
    .addColumn("scorer_trace_id", text, (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_feedback_pk", ["project_id", "id"])
    .execute();
  await db.schema.createIndex("trace_feedback_ref").on("trace_feedback").columns(["project_id", "weave_ref"]).execute();
  await db.schema.createIndex("trace_feedback_created").on("trace_feedback").columns(["project_id", "created_at"]).execute();

  await db.schema
    .createTable("trace_costs")
    .addColumn("id", text, (col) => col.primaryKey())
    .addColumn("pricing_level", text, (col) => col.notNull())
    .addColumn("pricing_level_id", text, (col) => col.notNull())
    .addColumn("provider_id", text, (col) => col.notNull())
    .addColumn("llm_id", text, (col) => col.notNull())
    .addColumn("effective_date", text, (col) => col.notNull())
    .addColumn("prompt_token_cost", "double precision", (col) => col.notNull())
    .addColumn("completion_token_cost", "double precision", (col) => col.notNull())
    .addColumn("cache_read_input_token_cost", "double precision", (col) => col.notNull())
    .addColumn("cache_creation_input_token_cost", "double precision", (col) => col.notNull())
    .addColumn("prompt_token_cost_unit", text, (col) => col.notNull())
    .addColumn("completion_token_cost_unit", text, (col) => col.notNull())
    .addColumn("created_by", "text")
    .addColumn("created_at", text, (col) => col.notNull())
    .execute();
  await db.schema.createIndex("trace_costs_lookup").on("trace_costs").columns(["pricing_level_id", "llm_id", "effective_date"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("trace_costs").execute();
  await db.schema.dropTable("trace_feedback").execute();
  await db.schema.dropTable("trace_call_refs").execute();
  await db.schema.dropTable("trace_calls").execute();
}
