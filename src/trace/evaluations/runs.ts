import type { CallSchema } from "../../store/trace/calls/types.js";
import { TraceBadRequest, TraceNotFound } from "../../store/trace/errors.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import { PLACEHOLDER_EVALUATE_OP_SOURCE } from "../object-layouts.js";
import type { Operand, Operation } from "../../store/trace/query/ast.js";
import { parseWeaveRef } from "../../store/trace/refs.js";
import type { TraceCallStore } from "../../store/trace/trace-store.js";
import type { V2ObjectResources } from "../v2-resources.js";
import { callEnd, callStart, publishedOpRef, readCall, readCalls } from "./call-writes.js";
import { EVALUATE_OP, isPredictAndScore, RUN_MARK, SUMMARIZE_OP, WEAVE_ATTRIBUTES, weaveAttributes } from "./constants.js";
import { scoreMeans } from "./summaries.js";

export interface Page {
  limit?: number;
  offset?: number;
}

/** An evaluation run as the v2 API shows it (`EvaluationRunReadRes`). */
export interface EvaluationRunView {
  evaluation_run_id: string;
  evaluation: string;
  model: string;
  status: "running" | "completed" | "failed";
  started_at: string;
  finished_at: string | null;
  summary: Record<string, unknown> | null;
  source_evaluation_run_id: string | null;
}

/** `$getField` of a key under `attributes.weave`. */
export const weaveField = (key: string): Operand => ({ $getField: `attributes.${WEAVE_ATTRIBUTES}.${key}` });
export const literal = (value: unknown): Operand => ({ $literal: value });

/** Reads, lists and deletes the calls a v2 resource is made of: calls marked `attributes.weave.<mark> = "true"`. */
export class MarkedCalls {
  constructor(
    private readonly calls: TraceCallStore,
    private readonly mark: string,
    private readonly label: string,
  ) {}

  /** The marked call; 404 when it does not exist, was deleted or is another kind of call. */
  async read(projectId: string, id: string): Promise<CallSchema> {
    const call = await readCall(this.calls, projectId, id);
    if (!call || weaveAttributes(call)[this.mark] !== "true") throw new TraceNotFound(`${this.label} ${id} not found`);
    return call;
  }

  list(projectId: string, conditions: Operand[], page: Page): Promise<CallSchema[]> {
    const query: Operation = { $and: [{ $eq: [weaveField(this.mark), literal("true")] }, ...conditions] };
    return readCalls(this.calls, { projectId, query, limit: page.limit, offset: page.offset });
  }

  /** Deletes the marked calls among `ids` (with their descendants); counts the listed ones deleted. */
  async delete(projectId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const found = await this.list(projectId, [{ $in: [{ $getField: "id" }, ids.map(literal)] }], {});
    if (found.length > 0)
      await this.calls.deleteCalls(
        projectId,
        found.map((call) => call.id),
      );
    return found.length;
  }
}

export function callStatus(call: CallSchema): EvaluationRunView["status"] {
  if (call.exception) return "failed";
  return call.ended_at ? "completed" : "running";
}

/** Checks that a value is a Weave ref (`weave:///...`); the v2 API refers to objects only by ref. */
export function requireRef(value: string, field: string): void {
  try {
    parseWeaveRef(value);
  } catch {
    throw new TraceBadRequest(`${field} must be a Weave ref (weave:///entity/project/...), got '${value}'`);
  }
}

/**
 * Evaluation runs of the v2 API (`docs/api/trace.md#v2-objects`), stored as calls the way Weave's servers
 * store them: an `Evaluation.evaluate` call marked `attributes.weave.evaluation_run = "true"`,
 * whose children are the predictions' `Evaluation.predict_and_score` calls; finishing adds an
 * `Evaluation.summarize` call and ends the run with per-scorer means.
 */
export class EvaluationRuns {
  private readonly runs: MarkedCalls;

  constructor(
    private readonly calls: TraceCallStore,
    private readonly v2: V2ObjectResources,
  ) {
    this.runs = new MarkedCalls(calls, RUN_MARK, "Evaluation run");
  }

  async create(projectId: string, input: { evaluation: string; model: string; sourceEvaluationRunId?: string | null }, wbUserId: string): Promise<string> {
    requireRef(input.evaluation, "evaluation");
    requireRef(input.model, "model");
    const opName = await publishedOpRef(this.v2, projectId, EVALUATE_OP, PLACEHOLDER_EVALUATE_OP_SOURCE, wbUserId);
    const marks: Record<string, unknown> = { [RUN_MARK]: "true", evaluation: input.evaluation, model: input.model };
    if (input.sourceEvaluationRunId) marks.source_evaluation_run_id = input.sourceEvaluationRunId;
    const start = callStart({ projectId, opName, inputs: { self: input.evaluation, model: input.model }, attributes: { [WEAVE_ATTRIBUTES]: marks }, wbUserId });
    await this.calls.writeCalls([{ start }]);
    return start.id;
  }

  async read(projectId: string, id: string): Promise<EvaluationRunView> {
    return runView(await this.runs.read(projectId, id));
  }

  async list(projectId: string, filter: { evaluations?: string[]; models?: string[]; runIds?: string[] }, page: Page): Promise<EvaluationRunView[]> {
    const conditions: Operand[] = [];
    if (filter.evaluations?.length) conditions.push({ $in: [weaveField("evaluation"), filter.evaluations.map(literal)] });
    if (filter.models?.length) conditions.push({ $in: [weaveField("model"), filter.models.map(literal)] });
    if (filter.runIds?.length) conditions.push({ $in: [{ $getField: "id" }, filter.runIds.map(literal)] });
    return (await this.runs.list(projectId, conditions, page)).map(runView);
  }

  delete(projectId: string, ids: string[]): Promise<number> {
    return this.runs.delete(projectId, ids);
  }

  /**
   * Ends a run: the means of the numeric scores (and numeric model outputs) of its
   * predict_and_score children become the output of a new `Evaluation.summarize` child and of the
   * run itself; the run's summary is the caller's.
   */
  async finish(projectId: string, id: string, summary: Record<string, unknown> | null | undefined, wbUserId: string): Promise<void> {
    const run = await this.runs.read(projectId, id);
    const children = await readCalls(this.calls, { projectId, filter: { parent_ids: [id] }, columns: ["output", "op_name"] });
    const outputs = children.filter((call) => isPredictAndScore(call.op_name)).map((call) => call.output);
    const means = scoreMeans(outputs.filter(isJsonObject));
    const summarize = callStart({ projectId, traceId: run.trace_id, parentId: id, opName: SUMMARIZE_OP, inputs: { self: run.inputs?.self ?? null }, wbUserId });
    await this.calls.writeCalls([{ start: summarize, end: callEnd(projectId, summarize.id, { output: means }) }]);
    await this.calls.writeCalls([{ end: callEnd(projectId, id, { output: means, summary: summary ?? {} }) }]);
  }
}

function runView(call: CallSchema): EvaluationRunView {
  const marks = weaveAttributes(call);
  const summary = call.summary ?? null;
  return {
    evaluation_run_id: call.id,
    evaluation: typeof marks.evaluation === "string" ? marks.evaluation : "",
    model: typeof marks.model === "string" ? marks.model : "",
    status: callStatus(call),
    started_at: call.started_at,
    finished_at: call.ended_at ?? null,
    summary,
    source_evaluation_run_id: typeof marks.source_evaluation_run_id === "string" ? marks.source_evaluation_run_id : null,
  };
}
