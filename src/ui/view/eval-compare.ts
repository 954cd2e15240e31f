/**
 * Two evaluation runs side by side, out of `POST /v2/{entity}/{project}/eval_results/query`:
 * a row per dataset example with each run's first trial, the rows whose scores or outputs differ
 * first (largest score change first), and each scorer's summary for both runs.
 */

export interface EvalTrial {
  model_output: unknown;
  scores: Record<string, unknown>;
}

export interface EvalRow {
  row_digest: string;
  raw_data_row: unknown;
  evaluations: { evaluation_call_id: string; trials: EvalTrial[] }[];
}

export interface ComparedSide {
  output: unknown;
  scores: Record<string, number>;
}

export interface ComparedRow {
  digest: string;
  input: unknown;
  a: ComparedSide | undefined;
  b: ComparedSide | undefined;
  /** Scores or outputs differ (or one run lacks the row). */
  differs: boolean;
  /** Sum over scorers of |b − a|, for ordering. */
  change: number;
}

/** Numeric leaves of a scores object by dotted path; booleans count as 0/1. */
export function flattenScores(scores: unknown, prefix = ""): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof scores === "number" && Number.isFinite(scores)) out[prefix || "score"] = scores;
  else if (typeof scores === "boolean") out[prefix || "score"] = scores ? 1 : 0;
  else if (scores && typeof scores === "object" && !Array.isArray(scores)) {
    for (const [key, value] of Object.entries(scores)) Object.assign(out, flattenScores(value, prefix ? `${prefix}.${key}` : key));
  }
  return out;
}

function sideOf(row: EvalRow, evaluationId: string): ComparedSide | undefined {
  const trial = row.evaluations.find((entry) => entry.evaluation_call_id === evaluationId)?.trials[0];
  return trial ? { output: trial.model_output, scores: flattenScores(trial.scores) } : undefined;
}

export function compareRows(rows: readonly EvalRow[], a: string, b: string): ComparedRow[] {
  const compared = rows.map((row): ComparedRow => {
    const left = sideOf(row, a);
    const right = sideOf(row, b);
    let change = 0;
    let differs = !left || !right;
    if (left && right) {
      for (const key of new Set([...Object.keys(left.scores), ...Object.keys(right.scores)])) {
        const delta = Math.abs((right.scores[key] ?? 0) - (left.scores[key] ?? 0));
        change += delta;
        if (delta > 0 || !(key in left.scores) || !(key in right.scores)) differs = true;
      }
      if (JSON.stringify(left.output) !== JSON.stringify(right.output)) differs = true;
    }
    return { digest: row.row_digest, input: row.raw_data_row, a: left, b: right, differs, change };
  });
  return compared.sort((x, y) => Number(y.differs) - Number(x.differs) || y.change - x.change || (x.digest < y.digest ? -1 : x.digest > y.digest ? 1 : 0));
}

/** Every scorer path found in the rows, sorted. */
export function scorerPaths(rows: readonly ComparedRow[]): string[] {
  const paths = new Set<string>();
  for (const row of rows) for (const side of [row.a, row.b]) for (const key of Object.keys(side?.scores ?? {})) paths.add(key);
  return [...paths].sort();
}
