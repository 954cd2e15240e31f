import { TraceBadRequest } from "../../store/trace/errors.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import type { RefReader } from "../refs-reader.js";
import { isWeaveRefString, parseWeaveRef } from "../../store/trace/refs.js";
import type { TableService } from "../tables.js";
import type { TraceCallStore } from "../../store/trace/trace-store.js";
import { readCall } from "./call-writes.js";
import { EVALUATE_OP } from "./constants.js";

export type EvaluationStatus = { code: "not_found" } | { code: "running"; completed_rows: number; total_rows: number } | { code: "failed"; error: string | null } | { code: "complete"; output: unknown };

/**
 * `/evaluations/status` (`docs/api/trace.md#evaluations`, Weave's `methods/evaluation_status.py`): an
 * `Evaluation.evaluate` call that failed, completed, or is running with the number of its direct
 * children that finished against its dataset's row count (at least the finished count).
 */
export async function evaluationStatus(deps: { calls: TraceCallStore; refs: RefReader; tables: TableService }, projectId: string, callId: string): Promise<EvaluationStatus> {
  const call = await readCall(deps.calls, projectId, callId);
  if (!call) return { code: "not_found" };
  if (!call.op_name.includes(EVALUATE_OP)) throw new TraceBadRequest(`Call ${callId} is not an evaluation (op ${call.op_name})`);
  if (call.exception) return { code: "failed", error: call.exception };
  if (call.ended_at) return { code: "complete", output: call.output ?? null };
  const completed = (await deps.calls.countCalls({ projectId, filter: { parent_ids: [callId] }, query: { $not: [{ $eq: [{ $getField: "ended_at" }, { $literal: null }] }] } })).count;
  const total = await datasetRowCount(deps, projectId, call.inputs?.self);
  return { code: "running", completed_rows: completed, total_rows: Math.max(total, completed) };
}

/** The row count of the evaluation's dataset (`inputs.self` → Evaluation.dataset → Dataset.rows); 0 when it cannot be read. */
async function datasetRowCount(deps: { refs: RefReader; tables: TableService }, projectId: string, evaluationRef: unknown): Promise<number> {
  if (!isWeaveRefString(evaluationRef)) return 0;
  const entity = projectId.split("/")[0]!;
  const [evaluation] = await deps.refs.tryReadBatch(entity, [evaluationRef]);
  const datasetRef = isJsonObject(evaluation) ? evaluation.dataset : undefined;
  if (!isWeaveRefString(datasetRef)) return 0;
  const [dataset] = await deps.refs.tryReadBatch(entity, [datasetRef]);
  const rows = isJsonObject(dataset) ? dataset.rows : undefined;
  if (!isWeaveRefString(rows)) return 0;
  const table = parseWeaveRef(rows);
  if (table.kind !== "table" || table.entity !== entity) return 0;
  try {
    return await deps.tables.count(`${table.entity}/${table.project}`, table.digest);
  } catch {
    return 0;
  }
}
