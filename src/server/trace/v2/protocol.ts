import { z } from "zod";
import { PyFloat, PyInt } from "../../../python-format.js";
import { zQuery } from "../common/query-schema.js";
import { JsonDict, OptionalString, RequiredJson, StringList } from "../common/schemas.js";
import { ListParam, ListQuery, ProjectPath } from "./common.js";

/** Requests and answers of the v2 API (`docs/api/trace.md#v2-objects`): ops, datasets, scorers, evaluations, models, evaluation runs, predictions and scores. */

/** What every create answers: the new version. */
const Created = z.object({ digest: z.string(), object_id: z.string(), version_index: z.int().min(0) });
/** What every read (and every line of a list) starts with. */
const Header = z.object({ object_id: z.string(), digest: z.string(), version_index: z.int().min(0), created_at: z.string() });

/** A number from a stored value, as stored: a plain number, or one that keeps its Python spelling (`1.0`, big integers). */
const StoredNumber = z.union([z.number(), z.instanceof(PyInt), z.instanceof(PyFloat)]).describe("A number");

export const CreatedRes = Created;
export const DeleteRes = z.object({ num_deleted: z.int().min(0) });

export const OpRes = Header.extend({ code: z.string().describe("The op's source code") });

export const DatasetRes = Header.extend({ name: z.string(), description: z.string().nullable(), rows: z.string().describe("Ref of the rows' table") });

export const ScorerCreateRes = Created.extend({ scorer: z.string().describe("Ref of the new scorer") });
export const ScorerRes = Header.extend({ name: z.string(), description: z.string().nullable(), score_op: z.string().describe("Ref of the score op") });

export const EvaluationCreateRes = Created.extend({ evaluation_ref: z.string() });
export const EvaluationRes = Header.extend({
  name: z.string(),
  description: z.string().nullable(),
  dataset: z.string().describe("Ref of the dataset"),
  scorers: z.array(z.unknown()).describe("Refs of the scorers, as stored"),
  trials: StoredNumber,
  evaluation_name: z.string().nullable(),
  evaluate_op: z.string().nullable(),
  predict_and_score_op: z.string().nullable(),
  summarize_op: z.string().nullable(),
});

export const ModelCreateRes = Created.extend({ model_ref: z.string() });
export const ModelRes = Header.extend({
  name: z.string(),
  description: z.string().nullable(),
  source_code: z.string(),
  attributes: z.record(z.string(), z.unknown()).nullable().describe("The model's own attributes (free-form), null when none"),
});

/* Predictions, scores and evaluation runs: stored as calls, shown as these views. */

export const SuccessRes = z.object({ success: z.literal(true) });

export const PredictionCreateRes = z.object({ prediction_id: z.string() });
export const PredictionRes = z.object({
  prediction_id: z.string(),
  model: z.string().describe("Model ref"),
  inputs: z.record(z.string(), z.unknown()).describe("The inputs as given"),
  output: z.unknown().describe("The output as given"),
  evaluation_run_id: z.string().nullable(),
  wb_user_id: z.string().nullable(),
});

export const ScoreCreateRes = z.object({ score_id: z.string() });
export const ScoreRes = z.object({
  score_id: z.string(),
  scorer: z.string().describe("Scorer ref"),
  value: z.unknown().describe("The score as given"),
  evaluation_run_id: z.string().nullable(),
  wb_user_id: z.string().nullable(),
});

export const EvaluationRunCreateRes = z.object({ evaluation_run_id: z.string() });
export const EvaluationRunRes = z.object({
  evaluation_run_id: z.string(),
  evaluation: z.string(),
  model: z.string(),
  status: z.enum(["running", "completed", "failed"]),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  summary: z.record(z.string(), z.unknown()).nullable().describe("The run's summary as recorded (score means)"),
  source_evaluation_run_id: z.string().nullable(),
});

/* Evaluation results by dataset row (`eval_results/query`). */

const EvalTrialRes = z.object({
  predict_and_score_call_id: z.string(),
  predict_call_id: z.string().nullable(),
  model_output: z.unknown().describe("The model's output, as recorded"),
  scores: z.record(z.string(), z.unknown()).describe("Scorer name → its output, as recorded"),
  model_latency_seconds: z.number().nullable(),
  total_tokens: z.number().nullable(),
  total_cost: z.number().nullable(),
  scorer_call_ids: z.record(z.string(), z.string()),
});

const EvalRowRes = z.object({
  row_digest: z.string(),
  raw_data_row: z.unknown().describe("The dataset row (a ref, or its value with resolve_row_refs); null unless include_raw_data_rows"),
  evaluations: z.array(z.object({ evaluation_call_id: z.string(), trials: z.array(EvalTrialRes) })),
});

const ScorerStatsRes = z.object({
  scorer_key: z.string(),
  path: z.string().nullable(),
  value_type: z.enum(["binary", "continuous", "text"]),
  trial_count: z.int().min(0),
  numeric_count: z.int().min(0),
  numeric_mean: z.number().nullable(),
  pass_true_count: z.int().min(0),
  pass_known_count: z.int().min(0),
  pass_rate: z.number().nullable(),
  pass_signal_coverage: z.number().nullable(),
});

const EvalSummaryRes = z.object({
  row_count: z.int().min(0),
  evaluations: z.array(
    z.object({
      evaluation_call_id: z.string(),
      trial_count: z.int().min(0),
      scorer_stats: z.array(ScorerStatsRes),
      predict_total_tokens: z.number().nullable(),
      predict_total_cost: z.number().nullable(),
      evaluation_ref: z.string().nullable(),
      model_ref: z.string().nullable(),
      display_name: z.string().nullable(),
      trace_id: z.string().nullable(),
      started_at: z.string().nullable(),
    }),
  ),
});

export const EvalResultsRes = z.object({
  rows: z.array(EvalRowRes).describe("Empty unless include_rows"),
  total_rows: z.int().min(0),
  summary: EvalSummaryRes.nullable().describe("Only with include_summary"),
  warnings: z.array(z.string()),
});

/** Request bodies and queries of the v2 routes. */

// datasets

export const DatasetCreateBody = z.object({ name: OptionalString, description: OptionalString, rows: z.array(JsonDict) });

// eval-results

export const EvalResultsQueryBody = z.object({
  evaluation_call_ids: StringList.nullish(),
  evaluation_run_ids: StringList.nullish(),
  require_intersection: z.boolean().default(false),
  include_raw_data_rows: z.boolean().default(false),
  resolve_row_refs: z.boolean().default(false),
  include_rows: z.boolean().default(true),
  include_summary: z.boolean().default(false),
  summary_require_intersection: z.boolean().nullish(),
  include_predict_and_score_children: z.boolean().default(true),
  include_costs: z.boolean().default(false),
  sort_by: z.array(z.object({ field: z.string(), direction: z.enum(["asc", "desc"]).default("asc"), evaluation_call_id: z.string().nullish(), mode: z.enum(["value", "difference"]).default("value") })).nullish(),
  filters: z.array(z.object({ evaluation_call_id: z.string().nullish(), query: zQuery })).nullish(),
  filter_logic_operator: z.enum(["and", "or"]).default("or"),
  limit: z.number().int().min(0).nullish(),
  offset: z.number().int().min(0).default(0),
});

// evaluation-runs
/** The public spec's filter names, and the Python client's (`evaluation_refs`, `model_refs`). */
export const RunListQuery = ListQuery.extend({ evaluations: ListParam, models: ListParam, evaluation_refs: ListParam, model_refs: ListParam, evaluation_run_ids: ListParam });
export const RunDeleteQuery = z.object({ evaluation_run_ids: ListParam });
/** The finish body may be absent. */
export const RunFinishBody = z.object({ summary: JsonDict.nullish() }).nullish();

export const RunCreateBody = z.object({ evaluation: z.string().describe("Evaluation ref"), model: z.string().describe("Model ref"), source_evaluation_run_id: OptionalString });
export const RunPath = ProjectPath.extend({ evaluation_run_id: z.string() });

// evaluations

export const EvaluationCreateBody = z.object({
  name: z.string(),
  description: OptionalString,
  dataset: z.string().describe("Dataset ref (weave:///...)"),
  scorers: StringList.nullish(),
  trials: z.number().int().min(1).default(1),
  evaluation_name: OptionalString,
  eval_attributes: JsonDict.nullish(),
});

// models

export const ModelCreateBody = z.object({ name: z.string(), description: OptionalString, source_code: z.string(), attributes: JsonDict.nullish() });

// ops

export const OpCreateBody = z.object({ name: OptionalString, source_code: OptionalString });

// predictions

export const PredictionCreateBody = z.object({
  model: z.string().describe("Model ref"),
  inputs: JsonDict,
  output: z.unknown(),
  evaluation_run_id: OptionalString,
  genai_span_ref: z.array(z.object({ trace_id: z.string(), span_id: z.string() })).nullish(),
});
export const ScoreCreateBody = z.object({ prediction_id: z.string(), scorer: z.string().describe("Scorer ref"), value: RequiredJson, evaluation_run_id: OptionalString });
export const PredictionPath = ProjectPath.extend({ prediction_id: z.string() });
export const ScorePath = ProjectPath.extend({ score_id: z.string() });
export const PredictionListQuery = ListQuery.extend({ evaluation_run_id: z.string().optional() });

// scorers

export const ScorerCreateBody = z.object({ name: z.string(), description: OptionalString, op_source_code: z.string() });
