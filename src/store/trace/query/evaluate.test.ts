import { describe, expect, it } from "vitest";
import type { Operation } from "./ast.js";
import { matchesQuery } from "./evaluate.js";

const field = (name: string) => ({ $getField: name });
const lit = (value: unknown) => ({ $literal: value });
const row = { scores: { exact: true, rating: 4, label: "good" }, inputs: { q: "2+2", n: "7", list: [1, 2] }, output: "4" };
const matches = (operation: Operation) => matchesQuery(operation, row);

describe("the query language on in-memory values", () => {
  it("compares JSON leaves with the calls store's type-tolerant rules", () => {
    expect(matches({ $eq: [field("scores.exact"), lit("true")] })).toBe(true);
    expect(matches({ $eq: [field("scores.exact"), lit(true)] })).toBe(true);
    expect(matches({ $gte: [field("scores.rating"), lit(4)] })).toBe(true);
    expect(matches({ $gt: [field("inputs.n"), lit(5)] })).toBe(true);
    expect(matches({ $lt: [field("inputs.q"), lit("3")] })).toBe(true);
    expect(matches({ $eq: [field("inputs.list.1"), lit(2)] })).toBe(true);
    expect(matches({ $eq: [field("missing"), lit(null)] })).toBe(true);
    expect(matches({ $gt: [field("missing"), lit(0)] })).toBe(false);
    expect(matches({ $not: [{ $gt: [field("missing"), lit(0)] }] })).toBe(true);
  });

  it("combines, converts and searches", () => {
    expect(matches({ $and: [{ $eq: [field("output"), lit("4")] }, { $in: [field("scores.label"), [lit("bad"), lit("good")]] }] })).toBe(true);
    expect(matches({ $or: [{ $eq: [field("output"), lit("5")] }, { $contains: { input: field("scores.label"), substr: lit("OO"), case_insensitive: true } }] })).toBe(true);
    expect(matches({ $eq: [{ $convert: { input: field("inputs.n"), to: "int" } }, lit(7)] })).toBe(true);
    expect(matches({ $eq: [{ $convert: { input: field("inputs.q"), to: "exists" } }, lit(true)] })).toBe(true);
    expect(() => matches({ $and: [] })).toThrow(/at least one/);
  });
});
