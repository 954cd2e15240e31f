import { sql } from "kysely";
import type { DialectName } from "../db.js";
import type { Operation, SortBy } from "./query/ast.js";
import { type FieldResolver, QueryCompiler } from "./query/compile.js";
import { QueryError } from "./query/errors.js";
import { traceSql } from "../dialect.js";
import type { TraceDb, TraceFeedbackTable } from "./call-tables.js";

/** Feedback as stored and returned (`docs/api/trace.md#feedback-schema`); JSON columns decoded. */
export interface Feedback {
  id: string;
  project_id: string;
  weave_ref: string;
  wb_user_id: string | null;
  creator: string | null;
  created_at: string;
  feedback_type: string;
  payload: Record<string, unknown>;
  annotation_ref: string | null;
  runnable_ref: string | null;
  call_ref: string | null;
  trigger_ref: string | null;
  queue_id: string | null;
  scorer_tags: string[];
  scorer_tag_reasons: Record<string, string>;
  scorer_tag_confidences: Record<string, number>;
  scorer_ratings: Record<string, number>;
  scorer_rating_reasons: Record<string, string>;
  scorer_rating_confidences: Record<string, number>;
  span_agent_name: string;
  span_agent_version: string;
  span_status_code: string;
  span_conversation_id: string;
  span_trace_id: string;
  scorer_trace_id: string;
}

/** The fields a new feedback row must have; the rest take Weave's defaults. */
export type FeedbackInput = Pick<Feedback, "id" | "project_id" | "weave_ref" | "feedback_type" | "payload" | "wb_user_id" | "created_at"> & Partial<Feedback>;

/** A complete feedback row: Weave's defaults for every optional column (`docs/api/trace.md#feedback-schema`). */
export function feedbackRow(input: FeedbackInput): Feedback {
  return {
    creator: null,
    annotation_ref: null,
    runnable_ref: null,
    call_ref: null,
    trigger_ref: null,
    queue_id: null,
    scorer_tags: [],
    scorer_tag_reasons: {},
    scorer_tag_confidences: {},
    scorer_ratings: {},
    scorer_rating_reasons: {},
    scorer_rating_confidences: {},
    span_agent_name: "",
    span_agent_version: "",
    span_status_code: "UNSET",
    span_conversation_id: "",
    span_trace_id: "",
    scorer_trace_id: "",
    ...input,
  };
}

export const FEEDBACK_COLUMNS: (keyof Feedback)[] = [
  "id",
  "project_id",
  "weave_ref",
  "wb_user_id",
  "creator",
  "created_at",
  "feedback_type",
  "payload",
  "annotation_ref",
  "runnable_ref",
  "call_ref",
  "trigger_ref",
  "queue_id",
  "scorer_tags",
  "scorer_tag_reasons",
  "scorer_tag_confidences",
  "scorer_ratings",
  "scorer_rating_reasons",
  "scorer_rating_confidences",
  "span_agent_name",
  "span_agent_version",
  "span_status_code",
  "span_conversation_id",
  "span_trace_id",
  "scorer_trace_id",
];
const JSON_COLUMNS = new Set(["payload", "scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences", "scorer_ratings", "scorer_rating_reasons", "scorer_rating_confidences"]);

function toRow(feedback: Feedback): TraceFeedbackTable {
  const row: Record<string, unknown> = {};
  for (const column of FEEDBACK_COLUMNS) row[column] = JSON_COLUMNS.has(column) ? JSON.stringify(feedback[column]) : feedback[column];
  return row as unknown as TraceFeedbackTable;
}

function fromRow(row: Record<string, unknown>): Feedback {
  const out: Record<string, unknown> = {};
  for (const column of FEEDBACK_COLUMNS) out[column] = JSON_COLUMNS.has(column) ? JSON.parse(row[column] as string) : row[column];
  return out as unknown as Feedback;
}

/** `$getField` names of feedback: its columns and dotted paths under payload (and the scorer maps). */
export function feedbackFieldResolver(dialect: DialectName): FieldResolver {
  const helper = traceSql(dialect);
  return (field) => {
    const [column, ...path] = field.split(".");
    if (path.some((part) => part.length === 0)) throw new QueryError(`Invalid feedback field '${field}'`);
    if (JSON_COLUMNS.has(column!)) return { kind: "json", text: helper.jsonText(sql.ref(`f.${column}`), path) };
    if (path.length > 0 || !(FEEDBACK_COLUMNS as string[]).includes(column!)) throw new QueryError(`Unknown feedback field '${field}'`);
    return column === "created_at" ? { kind: "scalar", type: "timestamp", sql: sql.ref("f.created_at") } : { kind: "scalar", type: "string", sql: sql.ref(`f.${column}`) };
  };
}

/**
 * Stores feedback rows. A row whose id already exists in the project is left as stored (a retried
 * create), and the stored row is what comes back.
 */
export async function insertFeedback(db: TraceDb, rows: Feedback[]): Promise<Feedback[]> {
  if (rows.length === 0) return [];
  await db
    .insertInto("trace_feedback")
    .values(rows.map(toRow))
    .onConflict((oc) => oc.columns(["project_id", "id"]).doNothing())
    .execute();
  const stored = await db
    .selectFrom("trace_feedback")
    .selectAll()
    .where((eb) => eb.or(rows.map((row) => eb.and([eb("project_id", "=", row.project_id), eb("id", "=", row.id)]))))
    .execute();
  const byKey = new Map(stored.map((row) => [`${row.project_id}\u0000${row.id}`, fromRow(row as unknown as Record<string, unknown>)]));
  return rows.map((row) => byKey.get(`${row.project_id}\u0000${row.id}`) ?? row);
}

/** Replaces feedback `oldId` with `replacement` in one transaction. */
export async function replaceFeedback(db: TraceDb, projectId: string, oldId: string, replacement: Feedback): Promise<Feedback> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("trace_feedback").where("project_id", "=", projectId).where("id", "=", oldId).execute();
    await trx.deleteFrom("trace_feedback").where("project_id", "=", projectId).where("id", "=", replacement.id).execute();
    await trx.insertInto("trace_feedback").values(toRow(replacement)).execute();
  });
  return replacement;
}

export async function purgeFeedback(db: TraceDb, projectId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom("trace_feedback").where("project_id", "=", projectId).where("id", "in", ids).execute();
}

export interface FeedbackQuery {
  projectId: string;
  fields?: string[] | null;
  query?: Operation | null;
  sortBy?: SortBy[] | null;
  limit?: number | null;
  offset?: number | null;
}

/**
 * Feedback rows matching a query, with only `fields` when given (a dotted payload path comes back
 * under its own dotted name), and the number of matches ignoring limit and offset.
 */
export async function queryFeedback(db: TraceDb, dialect: DialectName, q: FeedbackQuery): Promise<{ result: Record<string, unknown>[]; total_count: number }> {
  const resolve = feedbackFieldResolver(dialect);
  const compiler = new QueryCompiler(traceSql(dialect), resolve);
  const conditions = [sql`f.project_id = ${q.projectId}`];
  if (q.query) conditions.push(compiler.predicate(q.query));
  const where = sql.join(conditions, sql` AND `);
  const order = (q.sortBy ?? []).flatMap((key) => compiler.orderTerms(resolve(key.field), key.direction));
  order.push(sql`f.created_at ASC`, sql`f.id ASC`);
  const fields = q.fields && q.fields.length > 0 ? q.fields : null;
  const paths = (fields ?? []).filter((field) => !(FEEDBACK_COLUMNS as string[]).includes(field));
  for (const path of paths) resolve(path);

  const statement = sql<Record<string, unknown>>`SELECT f.*${sql.join(
    paths.map((path, index) => sql`, ${resolveText(resolve(path))} AS ${sql.ref(`path_${index}`)}`),
    sql``,
  )} FROM trace_feedback f WHERE ${where} ORDER BY ${sql.join(order)} ${traceSql(dialect).limitOffset(q.limit, q.offset)}`;
  const rows = (await statement.execute(db)).rows;
  const total = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM trace_feedback f WHERE ${where}`.execute(db);

  const result = rows.map((row) => {
    const full = fromRow(row) as unknown as Record<string, unknown>;
    if (!fields) return full;
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const index = paths.indexOf(field);
      out[field] = index < 0 ? full[field] : decodePathValue(row[`path_${index}`]);
    }
    return out;
  });
  return { result, total_count: Number(total.rows[0]?.n ?? 0) };
}

function resolveText(value: ReturnType<FieldResolver>) {
  if (value.kind === "json") return value.text;
  if (value.kind === "scalar") return value.sql;
  throw new QueryError("Unsupported feedback field");
}

/** A path value read as text: JSON text of objects, arrays, numbers and booleans is decoded again. */
function decodePathValue(text: unknown): unknown {
  if (typeof text !== "string") return text ?? null;
  try {
    const parsed = JSON.parse(text);
    return typeof parsed === "string" ? text : parsed;
  } catch {
    return text;
  }
}

/** Feedback on these calls (weave_ref `weave:///<project>/call/<id>`), for `include_feedback`. */
export async function feedbackForCalls(db: TraceDb, projectId: string, callIds: string[]): Promise<Map<string, Feedback[]>> {
  const byCall = new Map<string, Feedback[]>();
  if (callIds.length === 0) return byCall;
  const prefix = `weave:///${projectId}/call/`;
  const rows = await db
    .selectFrom("trace_feedback")
    .selectAll()
    .where("project_id", "=", projectId)
    .where(
      "weave_ref",
      "in",
      callIds.map((id) => `${prefix}${id}`),
    )
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  for (const row of rows) {
    const feedback = fromRow(row as unknown as Record<string, unknown>);
    const callId = feedback.weave_ref.slice(prefix.length);
    const list = byCall.get(callId) ?? [];
    list.push(feedback);
    byCall.set(callId, list);
  }
  return byCall;
}

/** Feedback created in [start, end) of one project, newest first, for stats and payload schemas. */
export async function feedbackInRange(
  db: TraceDb,
  q: { projectId: string; start: string; end: string; feedbackType?: string | null; triggerRef?: string | null; limit?: number },
): Promise<Pick<Feedback, "created_at" | "payload" | "trigger_ref">[]> {
  let select = db.selectFrom("trace_feedback").select(["created_at", "payload", "trigger_ref"]).where("project_id", "=", q.projectId).where("created_at", ">=", q.start).where("created_at", "<", q.end);
  if (q.feedbackType) select = select.where("feedback_type", "=", q.feedbackType);
  if (q.triggerRef) {
    // `ref:*` matches every version of a monitor.
    select = q.triggerRef.endsWith(":*") ? select.where(sql<boolean>`substr(trigger_ref, 1, ${q.triggerRef.length - 1}) = ${q.triggerRef.slice(0, -1)}`) : select.where("trigger_ref", "=", q.triggerRef);
  }
  if (q.limit !== undefined) select = select.limit(q.limit);
  const rows = await select.orderBy("created_at", "desc").execute();
  return rows.map((row) => ({ created_at: row.created_at, trigger_ref: row.trigger_ref, payload: JSON.parse(row.payload) as Record<string, unknown> }));
}
