import { describe, expect, it } from "vitest";
import { callFiltersFromQuery, callQueryBody, isoToLocalInput, localInputToIso, opDisplayName } from "./call-query.js";

describe("call list queries", () => {
  it("builds nothing but the project for no filters", () => {
    expect(callQueryBody("e/p", callFiltersFromQuery({}))).toEqual({ project_id: "e/p", filter: {} });
  });

  it("maps op, roots, status and text to the trace API's filter and query", () => {
    const filters = callFiltersFromQuery({ op: "predict", roots: "1", status: "error", q: "Paris" });
    expect(callQueryBody("e/p", filters)).toEqual({
      project_id: "e/p",
      filter: { op_names: ["weave:///e/p/op/predict:*"], trace_roots_only: true },
      query: {
        $expr: {
          $and: [
            { $eq: [{ $getField: "summary.weave.status" }, { $literal: "error" }] },
            {
              $or: ["op_name", "display_name", "inputs", "output"].map((field) => ({ $contains: { input: { $getField: field }, substr: { $literal: "Paris" }, case_insensitive: true } })),
            },
          ],
        },
      },
    });
  });

  it("adds a time range and a reaction, and ignores values it cannot use", () => {
    const filters = callFiltersFromQuery({ from: "2024-05-01T00:00:00.000Z", to: "2024-05-02T00:00:00.000Z", reaction: "👍" });
    expect(callQueryBody("e/p", filters).query).toEqual({
      $expr: {
        $and: [
          { $gte: [{ $getField: "started_at" }, { $literal: "2024-05-01T00:00:00.000Z" }] },
          { $lt: [{ $getField: "started_at" }, { $literal: "2024-05-02T00:00:00.000Z" }] },
          { $eq: [{ $getField: "feedback.[wandb.reaction.1].payload.emoji" }, { $literal: "👍" }] },
        ],
      },
    });
    expect(callFiltersFromQuery({ status: "weird", from: "yesterday-ish", reaction: "🦄" })).toEqual({ rootsOnly: false });
  });

  it("sends no search shorter than three characters (the trigram index cannot look it up)", () => {
    expect(callFiltersFromQuery({ q: "ab" })).toEqual({ rootsOnly: false });
    expect(callFiltersFromQuery({ q: "abc" })).toEqual({ rootsOnly: false, text: "abc" });
  });

  it("converts datetime-local values to instants and back", () => {
    const iso = localInputToIso("2024-05-01T12:30")!;
    expect(new Date(iso).getHours()).toBe(12);
    expect(isoToLocalInput(iso)).toBe("2024-05-01T12:30");
    expect(localInputToIso("")).toBeUndefined();
    expect(isoToLocalInput("nope")).toBe("");
  });

  it("shortens op refs", () => {
    expect(opDisplayName("weave:///e/p/op/my_op:abc123")).toBe("my_op");
    expect(opDisplayName("plain")).toBe("plain");
  });
});
