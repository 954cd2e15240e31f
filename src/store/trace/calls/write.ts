import type { CompiledQuery } from "kysely";
import type { DialectName } from "../../db.js";
import type { SqliteWalCommit } from "../../sqlite-commit.js";
import { bulkInsert, rawStatement } from "../../dialect.js";
import type { TraceDb } from "../call-tables.js";
import { nowTimestamp } from "../timestamps.js";
import { type LeafDocument, leafInsertStatements } from "./leaf-index.js";
import { leafKeys } from "./leaf-keys.js";
import { type NumberLeaf, numberLeaves } from "./number-leaves.js";
import { latencyInsertStatements, latencyLeaf, latencyText, type NumberRows, numberDeleteStatements, numberInsertStatements } from "./range-index.js";
import { JSON_COLUMNS } from "./fields.js";
import { jsonSearchText, type TextDocument, textInsertStatements } from "./text-index.js";
import type { Committed } from "./group-commit.js";
import { extractRefs } from "./refs.js";
import { trimJsonFields } from "./trim.js";
import type { CallEnd, CallStart, CallWrite } from "./types.js";

const START_COLUMNS = ["project_id", "id", "op_name", "display_name", "trace_id", "parent_id", "thread_id", "turn_id", "started_at", "attributes", "inputs", "otel_dump", "wb_user_id", "wb_run_id", "wb_run_step"];
const END_COLUMNS = ["ended_at", "exception", "output", "summary", "wb_run_step_end"];
const END_ONLY_COLUMNS = ["project_id", "id", "trace_id", ...END_COLUMNS];

const encode = (value: unknown): string => (value === undefined ? "null" : JSON.stringify(value));

/** Rows for the call tables, collected call by call. */
interface CallRows {
  complete: unknown[][];
  starts: unknown[][];
  ends: unknown[][];
  refs: unknown[][];
  /** Leaf index keys of the call being added (see `leaf-keys.ts`). */
  keys: number[];
  leaves: LeafDocument[];
  /** Numeric leaves of the call being added (see `number-leaves.ts`), and of every call. */
  callNumbers: NumberLeaf[];
  numbers: NumberRows[];
  /** Text index documents (see `text-index.ts`), one per stored part. */
  texts: TextDocument[];
}

/**
 * Leaf index keys and range index rows of one stored JSON column: of the value as stored, so of the
 * placeholder when trimmed.
 */
function addLeaves(rows: CallRows, projectId: string, column: string, value: unknown, encoded: string, stored: string | null): void {
  const indexed = stored === encoded ? value : stored === null ? null : JSON.parse(stored);
  for (const key of leafKeys(projectId, column, indexed)) rows.keys.push(key);
  for (const leaf of numberLeaves(column, indexed)) rows.callNumbers.push(leaf);
}

function startValues(rows: CallRows, start: CallStart, inputsText: string): unknown[] {
  const attributesText = encode(start.attributes);
  const json = trimJsonFields({ attributes: attributesText, inputs: inputsText, otel_dump: start.otelDump == null ? null : encode(start.otelDump) }, `${start.opName}${start.displayName ?? ""}`, start.id);
  addLeaves(rows, start.projectId, "inputs", start.inputs, inputsText, json.inputs);
  addLeaves(rows, start.projectId, "attributes", start.attributes, attributesText, json.attributes);
  rows.texts.push({ projectId: start.projectId, callId: start.id, text: `${start.opName}\n${start.displayName ?? ""}\n${jsonSearchText(json.inputs)}` });
  return [
    start.projectId,
    start.id,
    start.opName,
    start.displayName,
    start.traceId,
    start.parentId,
    start.threadId,
    start.turnId,
    start.startedAt,
    json.attributes,
    json.inputs,
    json.otel_dump,
    start.wbUserId,
    start.wbRunId,
    start.wbRunStep,
  ];
}

function endValues(rows: CallRows, end: CallEnd, outputText: string): unknown[] {
  const summaryText = encode(end.summary);
  const json = trimJsonFields({ output: outputText, summary: summaryText }, end.exception ?? "", end.id);
  addLeaves(rows, end.projectId, "output", end.output ?? null, outputText, json.output);
  addLeaves(rows, end.projectId, "summary", end.summary, summaryText, json.summary);
  rows.texts.push({ projectId: end.projectId, callId: end.id, text: jsonSearchText(json.output) });
  return [end.endedAt, end.exception, json.output, json.summary, end.wbRunStepEnd];
}

/** Later starts and ends of the same call replace earlier ones, as if applied in order. */
function mergeWrites(writes: CallWrite[]): CallWrite[] {
  const merged = new Map<string, CallWrite>();
  for (const write of writes) {
    const base = write.start ?? write.end!;
    const key = `${base.projectId}\u0000${base.id}`;
    const entry = merged.get(key) ?? {};
    if (write.start) entry.start = write.start;
    if (write.end) entry.end = write.end;
    merged.set(key, entry);
  }
  return [...merged.values()];
}

function upsert(dialect: DialectName, columns: string[], rows: unknown[][], assignments: string): CompiledQuery[] {
  return bulkInsert(dialect, `INSERT INTO trace_calls (${columns.join(", ")})`, columns.length, rows, `ON CONFLICT (project_id, id) DO UPDATE SET ${assignments}`);
}

const assign = (columns: string[]) => columns.filter((column) => column !== "project_id" && column !== "id").map((column) => `${column} = excluded.${column}`);
const COMPLETE_ASSIGNMENTS = assign([...START_COLUMNS, ...END_COLUMNS]).join(", ");
const START_ASSIGNMENTS = assign(START_COLUMNS).join(", ");
const END_ASSIGNMENTS = [...assign(END_COLUMNS), "trace_id = COALESCE(trace_calls.trace_id, excluded.trace_id)"].join(", ");

/**
 * The statements that store starts and ends (run them in one transaction). A start and an end of
 * the same call become one row; an end that arrives before its start is kept and merged when the
 * start comes. Refs and leaf index documents go with them. Throws TooLargeError for a part that
 * cannot fit, before anything is written.
 */
export function callWriteStatements(dialect: DialectName, writes: CallWrite[]): CompiledQuery[] {
  const rows: CallRows = { complete: [], starts: [], ends: [], refs: [], keys: [], leaves: [], callNumbers: [], numbers: [], texts: [] };
  // The calls a write may complete, by project: their latency rows are added after the writes.
  const written = new Map<string, string[]>();
  for (const { start, end } of mergeWrites(writes)) {
    const { projectId, id } = (start ?? end)!;
    const ids = written.get(projectId);
    if (ids) ids.push(id);
    else written.set(projectId, [id]);
    rows.keys = [];
    rows.callNumbers = [];
    const inputsText = start ? encode(start.inputs) : "";
    const outputText = end ? encode(end.output) : "";
    if (start && end) rows.complete.push([...startValues(rows, start, inputsText), ...endValues(rows, end, outputText)]);
    else if (start) rows.starts.push(startValues(rows, start, inputsText));
    else if (end) rows.ends.push([end.projectId, end.id, end.traceId, ...endValues(rows, end, outputText)]);
    // Most payloads hold no ref; the text test skips walking them.
    if (start && inputsText.includes("weave:///")) collectRefs(rows.refs, start.projectId, start.id, "input", start.inputs);
    if (end && outputText.includes("weave:///")) collectRefs(rows.refs, end.projectId, end.id, "output", end.output);
    rows.leaves.push({ callId: (start ?? end)!.id, keys: rows.keys });
    if (rows.callNumbers.length > 0) rows.numbers.push({ projectId: (start ?? end)!.projectId, callId: (start ?? end)!.id, leaves: rows.callNumbers });
  }
  return [
    ...upsert(dialect, [...START_COLUMNS, ...END_COLUMNS], rows.complete, COMPLETE_ASSIGNMENTS),
    ...upsert(dialect, START_COLUMNS, rows.starts, START_ASSIGNMENTS),
    ...upsert(dialect, END_ONLY_COLUMNS, rows.ends, END_ASSIGNMENTS),
    ...bulkInsert(dialect, "INSERT INTO trace_call_refs (project_id, call_id, direction, ref)", 4, rows.refs, "ON CONFLICT DO NOTHING"),
    ...leafInsertStatements(dialect, rows.leaves),
    ...numberInsertStatements(dialect, rows.numbers),
    ...[...written].flatMap(([projectId, ids]) => latencyInsertStatements(dialect, projectId, ids)),
    ...textInsertStatements(dialect, rows.texts),
  ];
}

/**
 * Runs groups of write statements in one transaction, in order; on SQLite through the store's WAL
 * commit, which syncs the disk without blocking the event loop (and reports when it has).
 */
export async function runWriteStatements(db: TraceDb, walCommit: SqliteWalCommit | undefined, groups: CompiledQuery[][]): Promise<Committed> {
  if (groups.every((statements) => statements.length === 0)) return;
  if (walCommit) return walCommit.commit(groups.flat());
  await db.transaction().execute(async (trx) => {
    for (const statements of groups) for (const statement of statements) await trx.executeQuery(statement);
  });
}

function collectRefs(into: unknown[][], projectId: string, callId: string, direction: "input" | "output", value: unknown): void {
  for (const ref of extractRefs(value)) into.push([projectId, callId, direction, ref]);
}
/** Sets a call's display name, and indexes its text; an unknown call is no error (`docs/api/trace.md#calls`). */
export async function updateDisplayName(db: TraceDb, dialect: DialectName, projectId: string, callId: string, displayName: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable("trace_calls").set({ display_name: displayName }).where("project_id", "=", projectId).where("id", "=", callId).execute();
    for (const statement of textInsertStatements(dialect, [{ projectId, callId, text: displayName }])) await trx.executeQuery(statement);
  });
}

/** Soft-deletes the calls and all their descendants, and drops their range index rows; returns how many calls were marked. */
export async function deleteCalls(db: TraceDb, dialect: DialectName, projectId: string, callIds: string[]): Promise<number> {
  if (callIds.length === 0) return 0;
  const text = `WITH RECURSIVE doomed(id) AS (
      SELECT id FROM trace_calls WHERE project_id = ? AND deleted_at IS NULL AND id IN (${callIds.map(() => "?").join(", ")})
      UNION
      SELECT c.id FROM trace_calls c JOIN doomed d ON c.parent_id = d.id WHERE c.project_id = ? AND c.deleted_at IS NULL AND c.op_name IS NOT NULL
    )
    UPDATE trace_calls SET deleted_at = ? WHERE project_id = ? AND deleted_at IS NULL AND id IN (SELECT id FROM doomed)
    RETURNING id, ${JSON_COLUMNS.join(", ")}, ${latencyText(dialect, "trace_calls")} AS latency`;
  return db.transaction().execute(async (trx) => {
    const marked = await trx.executeQuery<Record<string, string | number | null>>(rawStatement(dialect, text, [projectId, ...callIds, projectId, nowTimestamp(), projectId]));
    // The rows as written: the leaves of what each call stores now.
    const documents: NumberRows[] = marked.rows.map((row) => ({
      projectId,
      callId: String(row.id),
      leaves: [
        ...JSON_COLUMNS.flatMap((column) => (row[column] === null || row[column] === undefined ? [] : numberLeaves(column, JSON.parse(String(row[column]))))),
        // Its latency row (a running call has none: deleting its 0 deletes nothing).
        ...latencyLeaf(row.latency),
      ],
    }));
    for (const statement of numberDeleteStatements(dialect, documents)) await trx.executeQuery(statement);
    return marked.rows.length;
  });
}
