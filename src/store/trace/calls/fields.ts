import { sql } from "kysely";
import { QueryError } from "../query/errors.js";
import type { FieldResolver, Value } from "../query/compile.js";
import type { Sql, TraceSql } from "../../dialect.js";

/** Columns that are never NULL on a started call. */
const NOT_NULL = new Set(["id", "project_id", "op_name", "trace_id", "started_at"]);
const STRING_COLUMNS = new Set(["id", "project_id", "op_name", "display_name", "trace_id", "parent_id", "thread_id", "turn_id", "exception", "wb_user_id", "wb_run_id", "deleted_at"]);
const TIMESTAMP_COLUMNS = new Set(["started_at", "ended_at"]);
const NUMBER_COLUMNS = new Set(["wb_run_step", "wb_run_step_end"]);
export const JSON_COLUMNS = ["inputs", "output", "attributes", "summary"] as const;
const FEEDBACK_COLUMNS = new Set(["id", "feedback_type", "weave_ref", "creator", "created_at", "wb_user_id", "runnable_ref", "call_ref", "trigger_ref", "annotation_ref", "queue_id"]);

/** Splits `a.b.0` into segments; an empty segment (leading, trailing or double dot) is an error. */
export function splitPath(field: string): string[] {
  const parts = field.split(".");
  if (parts.some((part) => part.length === 0)) throw new QueryError(`Invalid field '${field}': path components cannot be empty`);
  return parts;
}

/** Computed `summary.weave.*` fields, as SQL over the calls row aliased `c` (`docs/api/trace.md#call-schemas`). */
export function callStatusSql(dialect: TraceSql): Sql {
  const descendantErrors = dialect.numberOf(dialect.jsonText(sql.ref("c.summary"), ["status_counts", "error"]));
  return sql`(CASE WHEN c.exception IS NOT NULL THEN 'error' WHEN c.ended_at IS NULL THEN 'running' WHEN ${descendantErrors} > 0 THEN 'descendant_error' ELSE 'success' END)`;
}

export function callLatencySql(dialect: TraceSql): Sql {
  return sql.raw(callLatencyText(dialect, "c"));
}

/** `callLatencySql` as text, over the calls row named `table` (the range index writes it). */
export function callLatencyText(dialect: TraceSql, table: string): string {
  return `(CASE WHEN ${table}.ended_at IS NULL THEN 0 ELSE ${dialect.millisBetweenText(`${table}.started_at`, `${table}.ended_at`)} END)`;
}

/** display_name, else the name inside an op/object ref of this project, else op_name. */
export function callTraceNameSql(dialect: TraceSql, projectId: string): Sql {
  const refName = (kind: string) => {
    const prefix = `weave:///${projectId}/${kind}/`;
    const rest = sql`substr(c.op_name, ${prefix.length + 1})`;
    const colon = dialect.position(sql`':'`, rest);
    return {
      when: sql`substr(c.op_name, 1, ${prefix.length}) = ${prefix}`,
      // biome-ignore lint/suspicious/noThenProperty: the THEN of a SQL CASE arm, not a thenable
      then: sql`(CASE WHEN ${colon} > 0 THEN substr(${rest}, 1, ${colon} - 1) ELSE ${rest} END)`,
    };
  };
  const op = refName("op");
  const object = refName("object");
  return sql`(CASE WHEN c.display_name IS NOT NULL AND c.display_name <> '' THEN c.display_name WHEN ${op.when} THEN ${op.then} WHEN ${object.when} THEN ${object.then} ELSE c.op_name END)`;
}

/**
 * `status = 'error'` and `status = 'running'` as the column conditions they come down to (the first
 * branches of `callStatusSql`), which the partial index of failed calls and the started-at index serve.
 */
function statusEquals(literal: unknown): Sql | undefined {
  if (literal === "error") return sql`(c.exception IS NOT NULL)`;
  if (literal === "running") return sql`(c.exception IS NULL AND c.ended_at IS NULL)`;
  return undefined;
}

/** Computed `summary.weave.*` fields, which are not JSON paths of the stored summary. */
const COMPUTED_FIELDS = new Set(["summary.weave.status", "summary.weave.latency_ms", "summary.weave.trace_name", "summary.weave.display_name"]);

/**
 * The JSON column and path a `$getField` name reads (`inputs.a.b` → inputs, [a, b]), or undefined
 * for columns, computed and feedback fields. Throws QueryError for a malformed path.
 */
export function jsonFieldPath(field: string): { column: (typeof JSON_COLUMNS)[number]; path: string[] } | undefined {
  if (STRING_COLUMNS.has(field) || TIMESTAMP_COLUMNS.has(field) || NUMBER_COLUMNS.has(field) || COMPUTED_FIELDS.has(field)) return undefined;
  const [column, ...path] = splitPath(field);
  return (JSON_COLUMNS as readonly string[]).includes(column!) ? { column: column as (typeof JSON_COLUMNS)[number], path } : undefined;
}

/**
 * `$getField` names of calls: the columns, dotted JSON paths under inputs/output/attributes/summary,
 * the computed summary.weave.{status,latency_ms,trace_name}, and
 * `feedback.[<feedback_type>].<column or payload path>` (the newest feedback of that type on the call).
 */
export function callFieldResolver(dialect: TraceSql, projectId: string): FieldResolver {
  return (field: string): Value => {
    if (STRING_COLUMNS.has(field)) return { kind: "scalar", type: "string", sql: sql.ref(`c.${field}`), notNull: NOT_NULL.has(field) };
    if (TIMESTAMP_COLUMNS.has(field)) return { kind: "scalar", type: "timestamp", sql: sql.ref(`c.${field}`), notNull: NOT_NULL.has(field) };
    if (NUMBER_COLUMNS.has(field)) return { kind: "scalar", type: "number", sql: sql.ref(`c.${field}`) };
    if (field === "summary.weave.status") return { kind: "scalar", type: "string", sql: callStatusSql(dialect), notNull: true, equals: statusEquals };
    if (field === "summary.weave.latency_ms") return { kind: "scalar", type: "number", sql: callLatencySql(dialect), notNull: true };
    if (field === "summary.weave.trace_name") return { kind: "scalar", type: "string", sql: callTraceNameSql(dialect, projectId), notNull: true };
    if (field === "summary.weave.display_name") return { kind: "scalar", type: "string", sql: sql.ref("c.display_name") };
    const feedback = /^feedback\.\[([^\]]+)\]\.(.+)$/.exec(field);
    if (feedback) return feedbackField(dialect, feedback[1]!, feedback[2]!);
    const json = jsonFieldPath(field);
    if (json) return { kind: "json", text: dialect.jsonText(sql.ref(`c.${json.column}`), json.path) };
    throw new QueryError(`Unknown call field '${field}'`);
  };
}

function feedbackField(dialect: TraceSql, feedbackType: string, rest: string): Value {
  const [column, ...path] = splitPath(rest);
  const newest = (selected: Sql) =>
    sql`(SELECT ${selected} FROM trace_feedback f WHERE f.project_id = c.project_id AND f.weave_ref = 'weave:///' || c.project_id || '/call/' || c.id AND f.feedback_type = ${feedbackType} ORDER BY f.created_at DESC LIMIT 1)`;
  if (column === "payload") return { kind: "json", text: newest(dialect.jsonText(sql.ref("f.payload"), path)) };
  if (path.length === 0 && FEEDBACK_COLUMNS.has(column!)) return { kind: "scalar", type: "string", sql: newest(sql.ref(`f.${column}`)) };
  throw new QueryError(`Unknown feedback field '${rest}'`);
}
