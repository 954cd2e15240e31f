import { describe, expect, it } from "vitest";
import { checkReply, parseToolCalls, sameJson } from "./checks.js";

describe("checkReply", () => {
  it("reads the first number of an arithmetic reply", () => {
    expect(checkReply({ kind: "number", value: 85 }, "85")).toBe(true);
    expect(checkReply({ kind: "number", value: 85 }, "The answer is 85.")).toBe(true);
    expect(checkReply({ kind: "number", value: 85 }, "58")).toBe(false);
    expect(checkReply({ kind: "number", value: 85 }, "851")).toBe(false);
    expect(checkReply({ kind: "number", value: 5 }, "no idea")).toBe(false);
  });

  it("compares JSON objects by value, not by text", () => {
    const expected = { kind: "json", value: { name: "Maria", age: 34 } } as const;
    expect(checkReply(expected, '{"age":34,"name":"Maria"}')).toBe(true);
    expect(checkReply(expected, ' {"name": "Maria", "age": 34}\n')).toBe(true);
    expect(checkReply(expected, '{"name": "Maria", "age": "34"}')).toBe(false);
    expect(checkReply(expected, '{"name": "Maria", "age": 34, "city": "Oslo"}')).toBe(false);
    expect(checkReply(expected, '{"name": "Maria", "age": 34')).toBe(false);
  });

  it("needs exactly one Hermes tool call with the expected name and arguments", () => {
    const expected = { kind: "tool_call", name: "get_weather", arguments: { city: "Paris" } } as const;
    expect(checkReply(expected, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')).toBe(true);
    expect(checkReply(expected, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>')).toBe(false);
    expect(checkReply(expected, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>')).toBe(false);
    expect(checkReply(expected, "It is sunny in Paris.")).toBe(false);
    const twice = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    expect(checkReply(expected, twice)).toBe(false);
  });

  it("finds every mentioned value, ignoring case", () => {
    expect(checkReply({ kind: "contains", values: ["18", "cloudy"] }, "It is 18 degrees and Cloudy in Oslo.")).toBe(true);
    expect(checkReply({ kind: "contains", values: ["18", "cloudy"] }, "It is 18 degrees in Oslo.")).toBe(false);
  });
});

describe("parseToolCalls and sameJson", () => {
  it("parse every block and refuse a block without a name", () => {
    expect(parseToolCalls("no calls")).toEqual([]);
    expect(parseToolCalls('<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call> and <tool_call>{"name": "b"}</tool_call>')).toEqual([
      { name: "a", arguments: { x: 1 } },
      { name: "b", arguments: {} },
    ]);
    expect(parseToolCalls('<tool_call>{"arguments": {}}</tool_call>')).toBeNull();
  });

  it("compare nested values", () => {
    expect(sameJson({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
  });
});
