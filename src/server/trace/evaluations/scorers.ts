import { TraceBadRequest } from "../../../store/trace/errors.js";
import { isJsonObject } from "../../../store/trace/object-class.js";
import { classNameOf, LLM_MODEL_CLASS, type LlmModel, llmModelOf } from "./llm-model.js";
import { pythonStr } from "../../../python-format.js";
import { formatPython } from "./prompt-template.js";

/**
 * The scorers this server runs itself (docs/decisions/trace.md#D-TRACE-052): Weave's
 * `LLMAsAJudgeScorer` on the engine, Weave's `StringMatchScorer`, `LevenshteinScorer` and
 * `ValidJSONScorer`, and Flywheel's `ExactMatchScorer`. Scorers written as code (ops, custom
 * classes) run in the SDK that defined them, never here.
 */
export const JUDGE_CLASS = "LLMAsAJudgeScorer";

interface ScorerBase {
  ref: string;
  className: string;
  /** The key of its scores in results and the suffix of its feedback type. */
  name: string;
  columnMap: Record<string, string>;
}

export interface JudgeScorer extends ScorerBase {
  kind: "judge";
  model: LlmModel;
  /** The judge model as stored: its ref, or the inline object. */
  modelValue: unknown;
  scoringPrompt: string;
}

export interface BuiltinScorer extends ScorerBase {
  kind: "builtin";
  /** Dataset columns (after column_map) the score reads besides the output. */
  columns: string[];
  score(output: unknown, args: Record<string, unknown>): unknown;
}

export type Scorer = JudgeScorer | BuiltinScorer;

function levenshtein(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[y.length]!;
}

const text = (value: unknown) => pythonStr(value);

const BUILTINS: Record<string, Pick<BuiltinScorer, "columns" | "score">> = {
  StringMatchScorer: { columns: ["target"], score: (output, args) => ({ string_in_input: args.target !== undefined && text(args.target).toLowerCase().includes(text(output).toLowerCase()) }) },
  LevenshteinScorer: { columns: ["target"], score: (output, args) => ({ levenshtein_distance: levenshtein(text(output), text(args.target)) }) },
  ExactMatchScorer: { columns: ["target"], score: (output, args) => ({ exact_match: text(output).trim() === text(args.target).trim() }) },
  ValidJSONScorer: {
    columns: [],
    score: (output) => {
      if (typeof output !== "string") return { json_valid: output !== null && typeof output === "object" };
      try {
        JSON.parse(output);
        return { json_valid: true };
      } catch {
        return { json_valid: false };
      }
    },
  },
};

export const SUPPORTED_SCORERS = [JUDGE_CLASS, ...Object.keys(BUILTINS)];

/**
 * A stored scorer value as a runnable scorer; 400 when this server cannot run it. A judge's
 * `model` may be stored as a ref: `judgeModel` is then the object it names.
 */
export function scorerOf(value: unknown, ref: string, judgeModel: unknown): Scorer {
  const className = classNameOf(value);
  if (!isJsonObject(value) || !className || !SUPPORTED_SCORERS.includes(className)) {
    throw new TraceBadRequest(`Scorer ${ref} (${className ?? "not a scorer object"}) cannot run on this server; it runs ${SUPPORTED_SCORERS.join(", ")}`);
  }
  const columnMap = isJsonObject(value.column_map) ? (Object.fromEntries(Object.entries(value.column_map).filter(([, column]) => typeof column === "string")) as Record<string, string>) : {};
  const name = typeof value.name === "string" && value.name !== "" ? value.name : className;
  const base = { ref, className, name, columnMap };
  if (className !== JUDGE_CLASS) return { kind: "builtin", ...base, ...BUILTINS[className]! };
  if (typeof value.scoring_prompt !== "string") throw new TraceBadRequest(`Scorer ${ref} has no scoring_prompt`);
  if (classNameOf(judgeModel) !== LLM_MODEL_CLASS) throw new TraceBadRequest(`Scorer ${ref}: its model must be an ${LLM_MODEL_CLASS}`);
  return { kind: "judge", ...base, model: llmModelOf(judgeModel, `${ref} (model)`), modelValue: value.model, scoringPrompt: value.scoring_prompt };
}

/** A column a scorer reads: the mapped dataset column (`column_map` maps argument → column), else the argument's own name. */
function column(scorer: Scorer, row: Record<string, unknown>, arg: string): unknown {
  const mapped = scorer.columnMap[arg];
  return mapped !== undefined && Object.hasOwn(row, mapped) ? row[mapped] : row[arg];
}

/** The arguments a scorer call records and scores with, besides `output`. */
export function scoreArguments(scorer: Scorer, row: Record<string, unknown>): Record<string, unknown> {
  if (scorer.kind === "builtin") {
    const args: Record<string, unknown> = {};
    for (const arg of scorer.columns) {
      const value = column(scorer, row, arg);
      if (value === undefined) throw new Error(`Scorer ${scorer.name} needs the dataset column '${scorer.columnMap[arg] ?? arg}' (set column_map to use another column)`);
      args[arg] = value;
    }
    return args;
  }
  // A judge takes every column (and its mapped names) as prompt variables, as `score(output, **kwargs)` does.
  const args: Record<string, unknown> = { ...row };
  for (const arg of Object.keys(scorer.columnMap)) if (column(scorer, row, arg) !== undefined) args[arg] = column(scorer, row, arg);
  return args;
}

/** The user message a judge sends: its scoring prompt formatted with the output and the row's values. */
export function judgePrompt(scorer: JudgeScorer, output: unknown, args: Record<string, unknown>): string {
  return formatPython(scorer.scoringPrompt, { ...args, output });
}
