import { TraceBadRequest, TraceNotFound } from "../../../store/trace/errors.js";
import { isJsonObject } from "../../../store/trace/object-class.js";
import { isWeaveRefString, parseWeaveRef } from "../../../store/trace/refs.js";
import type { TraceServices } from "../../../trace/services.js";
import { bareModel, classNameOf, type LlmModel, llmModelOf } from "./llm-model.js";
import { type Scorer, scorerOf } from "./scorers.js";

/** One dataset row an evaluation runs on, with the ref the SDKs record for it. */
export interface DatasetRow {
  ref: string;
  value: Record<string, unknown>;
}

/** Everything an evaluation needs, read and checked before it starts. */
export interface EvaluationPlan {
  evaluationRef: string;
  evaluationName: string | null;
  /** What the calls record as the model: the ref given, or the served model's name. */
  modelInput: string;
  model: LlmModel;
  rows: DatasetRow[];
  scorers: Scorer[];
  trials: number;
}

/** Reads a ref that must name a live value; 404 when it names nothing (or a deleted object). */
async function readLive(trace: TraceServices, entity: string, ref: string, what: string): Promise<unknown> {
  const value = await trace.refs.read(entity, ref);
  if (value === null || value === undefined) throw new TraceNotFound(`${what} ${ref} not found`);
  return value;
}

/** Whether a stored object is of a class or a subclass of it (`_bases` lists the ancestors). */
function isInstance(value: unknown, className: string): boolean {
  return classNameOf(value) === className || (isJsonObject(value) && Array.isArray(value._bases) && value._bases.includes(className));
}

/** The model to evaluate: a ref to an LLMStructuredCompletionModel, or the name of a model this server serves. */
export async function loadModel(trace: TraceServices, entity: string, modelRef: string): Promise<LlmModel> {
  if (!isWeaveRefString(modelRef)) return bareModel(modelRef);
  return llmModelOf(await readLive(trace, entity, modelRef, "Model"), modelRef);
}

/** Scorers by ref, each one a kind this server runs (400 otherwise). */
export async function loadScorers(trace: TraceServices, entity: string, refs: unknown[]): Promise<Scorer[]> {
  const scorers: Scorer[] = [];
  for (const ref of refs) {
    if (typeof ref !== "string" || !isWeaveRefString(ref)) throw new TraceBadRequest(`Scorers must be refs to scorer objects, got ${JSON.stringify(ref)}`);
    const value = await readLive(trace, entity, ref, "Scorer");
    const modelField = isJsonObject(value) ? value.model : undefined;
    const judgeModel = isWeaveRefString(modelField) ? await readLive(trace, entity, modelField, "Judge model") : modelField;
    scorers.push(scorerOf(value, ref, judgeModel));
  }
  return scorers;
}

/** The rows of the evaluation's dataset, in table order, with Python's dataset row refs. */
async function loadRows(trace: TraceServices, entity: string, datasetRef: string): Promise<DatasetRow[]> {
  const dataset = await readLive(trace, entity, datasetRef, "Dataset");
  if (!isInstance(dataset, "Dataset") || !isJsonObject(dataset) || !isWeaveRefString(dataset.rows)) {
    throw new TraceBadRequest(`Invalid dataset ${datasetRef}: expected a Dataset whose rows are a table ref`);
  }
  const table = parseWeaveRef(dataset.rows);
  if (table.kind !== "table" || table.entity !== entity) throw new TraceNotFound(`Table of dataset ${datasetRef} not found`);
  const rows = await trace.tables.query(`${table.entity}/${table.project}`, { digest: table.digest });
  return rows.map((row) => {
    if (!isJsonObject(row.val)) throw new TraceBadRequest(`Dataset ${datasetRef} has a row that is not an object`);
    return { ref: `${datasetRef}/attr/rows/id/${row.digest}`, value: row.val };
  });
}

/**
 * Reads and checks a stored Evaluation (its dataset rows, its scorers, its trials) and the model to
 * run it against. Refs are read in the caller's entity; anything missing is 404, anything this
 * server cannot run is 400.
 */
export async function loadEvaluationPlan(trace: TraceServices, entity: string, evaluationRef: string, modelRef: string): Promise<EvaluationPlan> {
  if (!isWeaveRefString(evaluationRef)) throw new TraceBadRequest(`evaluation_ref must be a Weave ref, got '${evaluationRef}'`);
  const evaluation = await readLive(trace, entity, evaluationRef, "Evaluation");
  if (!isInstance(evaluation, "Evaluation") || !isJsonObject(evaluation)) {
    throw new TraceBadRequest(`Invalid evaluation reference ${evaluationRef}: expected Evaluation, got ${classNameOf(evaluation) ?? typeof evaluation}`);
  }
  if (typeof evaluation.dataset !== "string") throw new TraceBadRequest(`Evaluation ${evaluationRef} has no dataset ref`);
  const trials = typeof evaluation.trials === "number" && Number.isInteger(evaluation.trials) && evaluation.trials >= 1 ? evaluation.trials : 1;
  return {
    evaluationRef,
    evaluationName: typeof evaluation.evaluation_name === "string" ? evaluation.evaluation_name : null,
    modelInput: modelRef,
    model: await loadModel(trace, entity, modelRef),
    rows: await loadRows(trace, entity, evaluation.dataset),
    scorers: await loadScorers(trace, entity, Array.isArray(evaluation.scorers) ? evaluation.scorers : []),
    trials,
  };
}
