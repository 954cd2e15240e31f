import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseInput, RequestValidationError } from "./validation.js";

const schema = z.object({
  name: z.string(),
  count: z.number().int().min(1).max(10),
  ratio: z.number().gt(0),
  order: z.enum(["asc", "desc"]),
  id: z.uuid(),
  tags: z.array(z.string()).min(1),
  flag: z.boolean(),
});

function issuesOf(value: unknown) {
  try {
    parseInput(schema, value, "body");
  } catch (error) {
    if (error instanceof RequestValidationError) return error.issues;
    throw error;
  }
  return [];
}

describe("parseInput", () => {
  it("maps zod issues to FastAPI-style detail items", () => {
    const issues = issuesOf({ count: 11, ratio: 0, order: "up", id: "x", tags: [], flag: "yes" });
    expect(issues).toEqual([
      { loc: ["body", "name"], msg: "Field required", type: "missing" },
      { loc: ["body", "count"], msg: "Input should be less than or equal to 10", type: "less_than_equal" },
      { loc: ["body", "ratio"], msg: "Input should be greater than 0", type: "greater_than" },
      { loc: ["body", "order"], msg: "Input should be 'asc' or 'desc'", type: "literal_error" },
      { loc: ["body", "id"], msg: "Input should be a valid UUID", type: "uuid_parsing" },
      { loc: ["body", "tags"], msg: "List should have at least 1 items", type: "too_short" },
      { loc: ["body", "flag"], msg: "Input should be a valid boolean", type: "bool_type" },
    ]);
  });

  it("reports wrong types and fractional integers", () => {
    const issues = issuesOf({ name: 5, count: 1.5, ratio: "x", order: "asc", id: "00000000-0000-4000-8000-000000000000", tags: ["a"], flag: true });
    expect(issues.map((issue) => [issue.loc[1], issue.type])).toEqual([
      ["name", "string_type"],
      ["count", "int_type"],
      ["ratio", "float_type"],
    ]);
  });

  it("returns parsed data when valid", () => {
    const value = { name: "n", count: 2, ratio: 0.5, order: "asc", id: "00000000-0000-4000-8000-000000000000", tags: ["a"], flag: false };
    expect(parseInput(schema, value, "body")).toEqual(value);
  });
});
