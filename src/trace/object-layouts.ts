/**
 * The stored shapes of ops, datasets, scorers, models and evaluations that the SDKs publish, built
 * server-side for the v2 object API (`docs/api/trace.md#v2-objects`, Weave's `object_creation_utils`). The
 * key order matches Weave's builders; digests sort keys anyway.
 */

export const OP_SOURCE_FILE_NAME = "obj.py";

export const PLACEHOLDER_OP_SOURCE = `def func(*args, **kwargs):
    ... # Code-capture unavailable for this op
`;

export const PLACEHOLDER_SCORER_SUMMARIZE_OP_SOURCE = `def summarize(score_rows: list) -> dict | None:
    '''Default summarize implementation that auto-summarizes score rows.'''
    from weave.flow.scorer import auto_summarize
    return auto_summarize(score_rows)
`;

export const PLACEHOLDER_EVALUATE_OP_SOURCE = `import weave
@weave.op
def evaluate(evaluation, model):
    """Placeholder evaluate function."""
    # TODO: Implement actual evaluation logic
    return {"status": "not_implemented"}
`;

export const PLACEHOLDER_PREDICT_AND_SCORE_OP_SOURCE = `import weave
@weave.op
def predict_and_score(evaluation, example):
    """Placeholder predict_and_score function."""
    # TODO: Implement actual predict and score logic
    return {"prediction": None, "scores": {}}
`;

export const PLACEHOLDER_EVALUATION_SUMMARIZE_OP_SOURCE = `import weave
@weave.op
def summarize(evaluation_results):
    """Placeholder summarize function."""
    # TODO: Implement actual summarization logic
    return {"summary": "not_implemented"}
`;

export const PLACEHOLDER_MODEL_PREDICT_OP_SOURCE = `import weave
@weave.op
def predict(model, **inputs):
    """Placeholder model predict function."""
    # System-generated op for model predictions
    return model.predict(**inputs)
`;

export const PLACEHOLDER_SCORER_SCORE_OP_SOURCE = `import weave
@weave.op
def score(scorer, **inputs):
    """Placeholder scorer score function."""
    # System-generated op for scoring
    return scorer.score(**inputs)
`;

const OBJECT_BASES = ["Object", "BaseModel"];

/** `make_safe_name`: spaces and slashes become underscores, angle brackets go, lower case. */
export function makeSafeName(name: string): string {
  return name.replaceAll(" ", "_").replaceAll("/", "_").replaceAll("<", "").replaceAll(">", "").toLowerCase();
}

/** The object id for a name, or the class default when no name is given. */
export function makeObjectId(name: string | null | undefined, fallback: string): string {
  return name === null || name === undefined ? fallback : makeSafeName(name);
}

export function opVal(fileDigest: string): Record<string, unknown> {
  return { _type: "CustomWeaveType", weave_type: { type: "Op" }, files: { [OP_SOURCE_FILE_NAME]: fileDigest } };
}

export function datasetVal(tableRef: string, name: string | null | undefined, description: string | null | undefined): Record<string, unknown> {
  return { _type: "Dataset", _class_name: "Dataset", _bases: OBJECT_BASES, name: name ?? "Dataset", description: description ?? null, rows: tableRef };
}

export function scorerVal(name: string, description: string | null | undefined, scoreOpRef: string, summarizeOpRef: string): Record<string, unknown> {
  return { _type: "Scorer", _class_name: "Scorer", _bases: OBJECT_BASES, name, description: description ?? null, score: scoreOpRef, summarize: summarizeOpRef, column_map: null };
}

export function modelVal(name: string, description: string | null | undefined, sourceFileDigest: string, attributes: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return {
    _type: "Model",
    _class_name: "Model",
    _bases: OBJECT_BASES,
    name,
    description: description ?? null,
    files: { [OP_SOURCE_FILE_NAME]: sourceFileDigest },
    ...(attributes ?? {}),
  };
}

export interface EvaluationFields {
  name: string;
  description: string | null | undefined;
  dataset: string;
  scorers: string[] | null | undefined;
  trials: number;
  evaluationName: string | null | undefined;
  evalAttributes: Record<string, unknown> | null | undefined;
  evaluateRef: string;
  predictAndScoreRef: string;
  summarizeRef: string;
}

export function evaluationVal(fields: EvaluationFields): Record<string, unknown> {
  return {
    _type: "Evaluation",
    _class_name: "Evaluation",
    _bases: OBJECT_BASES,
    name: fields.name,
    description: fields.description ?? null,
    dataset: fields.dataset,
    scorers: fields.scorers ?? [],
    trials: fields.trials,
    evaluation_name: fields.evaluationName ?? null,
    metadata: null,
    preprocess_model_input: null,
    on_complete: null,
    evaluate: fields.evaluateRef,
    predict_and_score: fields.predictAndScoreRef,
    summarize: fields.summarizeRef,
    ...(fields.evalAttributes ?? {}),
  };
}

/** Keys of a model's value that are not its user attributes. */
export const MODEL_SYSTEM_KEYS = new Set(["_type", "_class_name", "_bases", "name", "description", "files"]);
