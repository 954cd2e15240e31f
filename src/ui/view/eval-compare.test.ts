import { describe, expect, it } from "vitest";
import { compareRows, flattenScores, scorerPaths } from "./eval-compare.js";

const row = (digest: string, a: unknown, b: unknown, outputs: [unknown, unknown] = ["x", "x"]) => ({
  row_digest: digest,
  raw_data_row: { q: digest },
  evaluations: [
    ...(a === undefined ? [] : [{ evaluation_call_id: "A", trials: [{ model_output: outputs[0], scores: a as Record<string, unknown> }] }]),
    ...(b === undefined ? [] : [{ evaluation_call_id: "B", trials: [{ model_output: outputs[1], scores: b as Record<string, unknown> }] }]),
  ],
});

describe("evaluation compare", () => {
  it("flattens nested scores to numeric paths", () => {
    expect(flattenScores({ exact: 1, judge: { correct: true, reason: "ok", confidence: 0.5 } })).toEqual({ exact: 1, "judge.correct": 1, "judge.confidence": 0.5 });
    expect(flattenScores(null)).toEqual({});
  });

  it("puts differing rows first, the biggest score change first, then by digest", () => {
    const rows = compareRows([row("r1", { s: 1 }, { s: 1 }), row("r2", { s: 0 }, { s: 1 }), row("r3", { s: 1 }, { s: 0.5 }), row("r4", { s: 1 }, undefined), row("r5", { s: 1 }, { s: 1 }, ["a", "b"])], "A", "B");
    expect(rows.map((r) => [r.digest, r.differs, r.change])).toEqual([
      ["r2", true, 1],
      ["r3", true, 0.5],
      ["r4", true, 0],
      ["r5", true, 0],
      ["r1", false, 0],
    ]);
    expect(rows[2]!.b).toBeUndefined();
    expect(scorerPaths(rows)).toEqual(["s"]);
  });
});
