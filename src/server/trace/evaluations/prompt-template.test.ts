import { describe, expect, it } from "vitest";
import { PyFloat, pythonRepr } from "../../../python-format.js";
import { formatPython, TemplateError } from "./prompt-template.js";

describe("Python str.format for prompt templates", () => {
  it("fills named fields, nested keys, escapes and conversions as Python prints them", () => {
    const values = { name: "Ada", row: { q: "2+2", tags: ["a", "b"] }, n: new PyFloat(1), ok: true, none: null };
    expect(formatPython("Hi {name}! {{literal}} {row[q]} {row.tags} {n} {ok} {none} {name!r}", values)).toBe("Hi Ada! {literal} 2+2 ['a', 'b'] 1.0 True None 'Ada'");
    expect(pythonRepr({ "it's": 'say "hi"\n' })).toBe(`{"it's": 'say "hi"\\n'}`);
  });

  it("names what is missing or unsupported", () => {
    expect(() => formatPython("{missing}", { a: 1, b: 2 })).toThrow("Prompt template variable 'missing' not found. Available variables: a, b");
    expect(() => formatPython("{}", {})).toThrow(TemplateError);
    expect(() => formatPython("{a:.2f}", { a: 0.125 })).toThrow(/not supported/);
    expect(() => formatPython("a } b", {})).toThrow(/Single '}'/);
    expect(() => formatPython("a { b", {})).toThrow(/Single '{'/);
  });
});
