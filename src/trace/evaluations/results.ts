import type { CallSchema } from "../../store/trace/calls/types.js";
import { MAX_FILTER_LENGTH } from "../../store/trace/calls/query.js";
import { TraceBadRequest } from "../../store/trace/errors.js";
import { compareByCodePoint } from "../../python-format.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import type { Operation } from "../../store/trace/query/ast.js";
import { fieldOf, matchesQuery } from "../../store/trace/query/evaluate.js";
import type { RefReader } from "../refs-reader.js";
import { isWeaveRefString } from "../../store/trace/refs.js";
import type { TraceCallStore } from "../../store/trace/trace-store.js";
import { readCalls } from "./call-writes.js";
import { isPredictAndScore } from "./constants.js";
import { type EvalRow, type EvalTrial, groupRows } from "./result-rows.js";
import { summarizeRows } from "./result-summary.js";

export interface EvalResultsSort {
  field: string;
  direction: "asc" | "desc";
  evaluation_call_id?: string | null;
  mode?: "value" | "difference" | null;
}

export interface EvalResultsQuery {
  projectId: string;
  evaluationCallIds: string[];
  requireIntersection: boolean;
  includeRawDataRows: boolean;
  resolveRowRefs: boolean;
  includeRows: boolean;
  includeSummary: boolean;
  summaryRequireIntersection: boolean | null;
  includePredictAndScoreChildren: boolean;
  includeCosts: boolean;
  sortBy: EvalResultsSort[];
  filters: { evaluation_call_id?: string | null; query: Operation }[];
  filterLogicOperator: "and" | "or";
  limit: number | null;
  offset: number;
}

const SORT_PREFIXES = ["scores.", "inputs.", "output."];

/**
 * `eval_results/query` (`docs/api/trace.md#v2-objects`, after Weave's `eval_results_helpers.py`): the
 * predict_and_score calls of the given evaluation calls grouped by dataset row, each row holding
 * every evaluation's trials, then filtered, sorted (row digest by default) and paged; optionally
 * with per-evaluation scorer statistics.
 */
export async function queryEvalResults(calls: TraceCallStore, refs: RefReader, q: EvalResultsQuery): Promise<Record<string, unknown>> {
  const rootIds = [...new Set(q.evaluationCallIds)];
  if (rootIds.length === 0) throw new TraceBadRequest("evaluation_call_ids or evaluation_run_ids must name at least one evaluation");
  for (const sort of q.sortBy) {
    if (!SORT_PREFIXES.some((prefix) => sort.field.startsWith(prefix))) throw new TraceBadRequest(`Unsupported sort field: '${sort.field}'. Supported: scores.*, inputs.*, output.*.`);
    if (sort.mode === "difference" && !sort.field.startsWith("scores.")) throw new TraceBadRequest(`mode='difference' only supports numeric fields (scores.*), got '${sort.field}'.`);
  }
  const pasCalls = (await childrenOf(calls, q.projectId, rootIds, q.includeCosts)).filter((call) => isPredictAndScore(call.op_name));
  const children = new Map<string, CallSchema[]>();
  if (q.includePredictAndScoreChildren) {
    for (const call of await childrenOf(
      calls,
      q.projectId,
      pasCalls.map((pas) => pas.id),
      q.includeCosts,
    )) {
      children.set(call.parent_id!, [...(children.get(call.parent_id!) ?? []), call]);
    }
  }
  let rows = groupRows(pasCalls, children, true);
  const usesInputs = q.sortBy.some((sort) => sort.field.startsWith("inputs.")) || q.filters.length > 0;
  const inputsOf = usesInputs ? await resolvedExamples(refs, q.projectId, rows) : new Map<string, unknown>();
  rows = rows.filter((row) => matchesFilters(row, inputsOf.get(row.row_digest) ?? row.raw_data_row, q));
  const intersect = (selected: EvalRow[], required: boolean) => (required && rootIds.length > 1 ? selected.filter((row) => rootIds.every((id) => row.evaluations.some((entry) => entry.evaluation_call_id === id))) : selected);
  const result: Record<string, unknown> = { rows: [], total_rows: 0, summary: null, warnings: [] as string[] };
  if (q.includeRows) {
    const selected = sortRows(intersect(rows, q.requireIntersection), q.sortBy, rootIds, inputsOf);
    const page = selected.slice(q.offset, q.limit === null ? undefined : q.offset + q.limit).map((row) => ({ ...row, raw_data_row: q.includeRawDataRows ? row.raw_data_row : null }));
    if (q.includeRawDataRows && q.resolveRowRefs) {
      const resolved = usesInputs ? inputsOf : await resolvedExamples(refs, q.projectId, page);
      for (const row of page) if (resolved.has(row.row_digest)) row.raw_data_row = resolved.get(row.row_digest);
    }
    result.rows = page;
    result.total_rows = selected.length;
  }
  if (q.includeSummary) {
    const roots = await readCalls(calls, { projectId: q.projectId, filter: { call_ids: rootIds }, columns: ["inputs", "display_name"] });
    result.summary = summarizeRows(intersect(rows, q.summaryRequireIntersection ?? q.requireIntersection), roots);
  }
  return result;
}

/** Live children of the given calls, read in batches of at most 1000 parents. */
async function childrenOf(calls: TraceCallStore, projectId: string, parentIds: string[], includeCosts: boolean): Promise<CallSchema[]> {
  const out: CallSchema[] = [];
  for (let start = 0; start < parentIds.length; start += MAX_FILTER_LENGTH) {
    for await (const page of calls.queryCalls({ projectId, filter: { parent_ids: parentIds.slice(start, start + MAX_FILTER_LENGTH) } }, { includeCosts })) out.push(...page);
  }
  return out;
}

/** Each row's example with a row ref resolved to the row's value (for filters and sorts on `inputs.*`). */
async function resolvedExamples(refs: RefReader, projectId: string, rows: EvalRow[]): Promise<Map<string, unknown>> {
  const withRefs = rows.filter((row) => isWeaveRefString(row.raw_data_row));
  const values = await refs.tryReadBatch(
    projectId.split("/")[0]!,
    withRefs.map((row) => row.raw_data_row as string),
  );
  const out = new Map<string, unknown>();
  withRefs.forEach((row, index) => {
    if (values[index] !== null && values[index] !== undefined) out.set(row.row_digest, values[index]);
  });
  return out;
}

/** What a filter or sort field reads for one trial: `scores.*`, `inputs.*` (the dataset row), `output.*`. */
function trialView(trial: EvalTrial, inputs: unknown): Record<string, unknown> {
  return { scores: trial.scores, inputs: isJsonObject(inputs) ? inputs : {}, output: trial.model_output };
}

function matchesFilters(row: EvalRow, inputs: unknown, q: EvalResultsQuery): boolean {
  if (q.filters.length === 0) return true;
  const results = q.filters.map((filter) =>
    row.evaluations.filter((entry) => !filter.evaluation_call_id || entry.evaluation_call_id === filter.evaluation_call_id).some((entry) => entry.trials.some((trial) => matchesQuery(filter.query, trialView(trial, inputs)))),
  );
  return q.filterLogicOperator === "and" ? results.every(Boolean) : results.some(Boolean);
}

/** A row's sort value for one evaluation: the mean of numeric trial values, else the first value. */
function rowValue(row: EvalRow, evaluationId: string, field: string, inputs: unknown): unknown {
  const trials = row.evaluations.find((entry) => entry.evaluation_call_id === evaluationId)?.trials ?? [];
  const values = trials.map((trial) => fieldOf(trialView(trial, inputs), field)).map((value) => (typeof value === "boolean" ? Number(value) : value));
  const numbers = values.filter((value): value is number => typeof value === "number");
  if (numbers.length > 0) return numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
  return values.find((value) => value !== null && value !== undefined) ?? null;
}

function compareValues(a: unknown, b: unknown): number {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return compareByCodePoint(typeof a === "string" ? a : JSON.stringify(a), typeof b === "string" ? b : JSON.stringify(b));
}

/**
 * Orders rows by the sort keys (missing values last), then by row digest. A key reads the
 * evaluation it names (the first requested one by default); `difference` sorts by that
 * evaluation's value minus the first other requested evaluation's.
 */
function sortRows(rows: EvalRow[], sortBy: EvalResultsSort[], rootIds: string[], inputsOf: Map<string, unknown>): EvalRow[] {
  const keyed = rows.map((row) => {
    const inputs = inputsOf.get(row.row_digest) ?? row.raw_data_row;
    const keys = sortBy.map((sort) => {
      const evaluationId = sort.evaluation_call_id ?? rootIds[0]!;
      const value = rowValue(row, evaluationId, sort.field, inputs);
      if (sort.mode !== "difference") return value;
      const baseline = rootIds.find((id) => id !== evaluationId);
      const other = baseline ? rowValue(row, baseline, sort.field, inputs) : null;
      return typeof value === "number" && typeof other === "number" ? value - other : null;
    });
    return { row, keys };
  });
  keyed.sort((a, b) => {
    for (let i = 0; i < sortBy.length; i++) {
      const missing = (value: unknown) => value === null || value === undefined;
      const order = compareValues(a.keys[i], b.keys[i]);
      if (order === 0) continue;
      // Missing values stay last in both directions.
      if (missing(a.keys[i]) || missing(b.keys[i])) return order;
      return sortBy[i]!.direction === "desc" ? -order : order;
    }
    return compareByCodePoint(a.row.row_digest, b.row.row_digest);
  });
  return keyed.map((entry) => entry.row);
}
