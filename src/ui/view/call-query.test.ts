import { describe, expect, it } from "vitest";
import { callFiltersFromQuery, callQueryBody, opDisplayName } from "./call-query.js";

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

  it("ignores an unknown status", () => {
    expect(callFiltersFromQuery({ status: "weird" })).toEqual({ rootsOnly: false });
  });

  it("shortens op refs", () => {
    expect(opDisplayName("weave:///e/p/op/my_op:abc123")).toBe("my_op");
    expect(opDisplayName("plain")).toBe("plain");
  });
});
