import { describe, expect, it } from "vitest";
import { autoSummarize, scoreMeans } from "./summaries.js";

describe("evaluation summaries", () => {
  it("auto-summarises like Weave: booleans, numbers, nested objects, nothing else", () => {
    expect(autoSummarize([true, false, true, null])).toEqual({ true_count: 2, true_fraction: 2 / 3 });
    expect(autoSummarize([1, 2, 6])).toEqual({ mean: 3 });
    expect(
      autoSummarize([
        { correct: true, score: 1, note: "a" },
        { correct: false, score: 3, note: "b" },
      ]),
    ).toEqual({ correct: { true_count: 1, true_fraction: 0.5 }, score: { mean: 2 } });
    // A key whose summary has a key of its own name is merged flat.
    expect(autoSummarize([{ mean: 2 }, { mean: 4 }])).toEqual({ mean: 3 });
    expect(autoSummarize(["text", "more"])).toBeUndefined();
    expect(autoSummarize([null, null])).toBeUndefined();
    expect(autoSummarize([])).toEqual({});
  });

  it("averages numeric scores and outputs for a finished v2 run", () => {
    const outputs = [
      { output: 1, scores: { exact: 1, judge: { score: 3 }, passed: true } },
      { output: "x", scores: { exact: 0.5 } },
    ];
    expect(scoreMeans(outputs)).toEqual({ exact: { mean: 0.75 }, output: { mean: 1 } });
  });
});
