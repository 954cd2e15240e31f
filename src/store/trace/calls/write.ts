import type { CompiledQuery } from "kysely";
import type { DialectName } from "../../db.js";
import { rawStatement, rowsPerStatement, valuesPlaceholders } from "../raw-sql.js";
import type { TraceDb } from "../call-tables.js";
import { nowTimestamp } from "../timestamps.js";
import { extractRefs } from "./refs.js";
import { trimJsonFields } from "./trim.js";
import type { CallEnd, CallStart, CallWrite } from "./types.js";

const START_COLUMNS = ["project_id", "id", "op_name", "display_name", "trace_id", "parent_id", "thread_id", "turn_id", "started_at", "attributes", "inputs", "otel_dump", "wb_user_id", "wb_run_id", "wb_run_step"];
const END_COLUMNS = ["ended_at", "exception", "output", "summary", "wb_run_step_end"];
const END_ONLY_COLUMNS = ["project_id", "id", "trace_id", ...END_COLUMNS];

const encode = (value: unknown): string => (value === undefined ? "null" : JSON.stringify(value));

function startValues(start: CallStart, inputsText: string): unknown[] {
  const json = trimJsonFields(
    { attributes: encode(start.attributes), inputs: inputsText, otel_dump: start.otelDump == null ? null : encode(start.otelDump) },
    `${start.opName}${start.displayName ?? ""}`,
    start.id,
  );
  return [start.projectId, start.id, start.opName, start.displayName, start.traceId, start.parentId, start.threadId, start.turnId, start.startedAt, json.attributes, json.inputs, json.otel_dump, start.wbUserId, start.wbRunId, start.wbRunStep];
}

function endValues(end: CallEnd, outputText: string): unknown[] {
  const json = trimJsonFields({ output: outputText, summary: encode(end.summary) }, end.exception ?? "", end.id);
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
  const statements: CompiledQuery[] = [];
  const step = rowsPerStatement(columns.length);
  for (let offset = 0; offset < rows.length; offset += step) {
    const chunk = rows.slice(offset, offset + step);
    const text = `INSERT INTO trace_calls (${columns.join(", ")}) VALUES ${valuesPlaceholders(chunk.length, columns.length)} ON CONFLICT (project_id, id) DO UPDATE SET ${assignments}`;
    statements.push(rawStatement(dialect, text, chunk.flat()));
  }
  return statements;
}

const assign = (columns: string[]) => columns.filter((column) => column !== "project_id" && column !== "id").map((column) => `${column} = excluded.${column}`);

/**
 * Stores starts and ends in one transaction. A start and an end of the same call become one row;
 * an end that arrives before its start is kept and merged when the start comes.
 */
export async function writeCalls(db: TraceDb, dialect: DialectName, writes: CallWrite[]): Promise<void> {
  const complete: unknown[][] = [];
  const starts: unknown[][] = [];
  const ends: unknown[][] = [];
  const refs: unknown[][] = [];
  for (const { start, end } of mergeWrites(writes)) {
    const inputsText = start ? encode(start.inputs) : "";
    const outputText = end ? encode(end.output) : "";
    if (start && end) complete.push([...startValues(start, inputsText), ...endValues(end, outputText)]);
    else if (start) starts.push(startValues(start, inputsText));
    else if (end) ends.push([end.projectId, end.id, end.traceId, ...endValues(end, outputText)]);
    // Most payloads hold no ref; the text test skips walking them.
    if (start && inputsText.includes("weave:///")) collectRefs(refs, start.projectId, start.id, "input", start.inputs);
    if (end && outputText.includes("weave:///")) collectRefs(refs, end.projectId, end.id, "output", end.output);
  }

  const statements = [
    ...upsert(dialect, [...START_COLUMNS, ...END_COLUMNS], complete, assign([...START_COLUMNS, ...END_COLUMNS]).join(", ")),
    ...upsert(dialect, START_COLUMNS, starts, assign(START_COLUMNS).join(", ")),
    ...upsert(dialect, END_ONLY_COLUMNS, ends, [...assign(END_COLUMNS), "trace_id = COALESCE(trace_calls.trace_id, excluded.trace_id)"].join(", ")),
  ];
  const refStep = rowsPerStatement(4);
  for (let offset = 0; offset < refs.length; offset += refStep) {
    const chunk = refs.slice(offset, offset + refStep);
    const text = `INSERT INTO trace_call_refs (project_id, call_id, direction, ref) VALUES ${valuesPlaceholders(chunk.length, 4)} ON CONFLICT DO NOTHING`;
    statements.push(rawStatement(dialect, text, chunk.flat()));
  }
  if (statements.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const statement of statements) await trx.executeQuery(statement);
  });
}

function collectRefs(into: unknown[][], projectId: string, callId: string, direction: "input" | "output", value: unknown): void {
  for (const ref of extractRefs(value)) into.push([projectId, callId, direction, ref]);
}

/** Sets a call's display name; an unknown call is no error (`spec/trace.md` §4.1). */
export async function updateDisplayName(db: TraceDb, projectId: string, callId: string, displayName: string): Promise<void> {
  await db.updateTable("trace_calls").set({ display_name: displayName }).where("project_id", "=", projectId).where("id", "=", callId).execute();
}

/** Soft-deletes the calls and all their descendants; returns how many calls were marked. */
export async function deleteCalls(db: TraceDb, dialect: DialectName, projectId: string, callIds: string[]): Promise<number> {
  if (callIds.length === 0) return 0;
  const text = `WITH RECURSIVE doomed(id) AS (
      SELECT id FROM trace_calls WHERE project_id = ? AND deleted_at IS NULL AND id IN (${callIds.map(() => "?").join(", ")})
      UNION
      SELECT c.id FROM trace_calls c JOIN doomed d ON c.parent_id = d.id WHERE c.project_id = ? AND c.deleted_at IS NULL AND c.op_name IS NOT NULL
    )
    UPDATE trace_calls SET deleted_at = ? WHERE project_id = ? AND deleted_at IS NULL AND id IN (SELECT id FROM doomed)`;
  const result = await db.executeQuery(rawStatement(dialect, text, [projectId, ...callIds, projectId, nowTimestamp(), projectId]));
  return Number(result.numAffectedRows ?? 0);
}
