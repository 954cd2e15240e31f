import { describe, expect, it } from "vitest";
import { checkConstraint } from "./check.js";
import { StructuredOutputError } from "./errors.js";
import type { StructuredConstraint } from "./types.js";

async function failure(constraint: StructuredConstraint): Promise<string> {
  const error = await checkConstraint(constraint).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(StructuredOutputError);
  return (error as StructuredOutputError).message;
}

describe("checkConstraint refuses bad constraints with vLLM's messages", () => {
  it.each<[string, StructuredConstraint, string | RegExp]>([
    ["an unclosed group", { kind: "regex", pattern: "a(b" }, /^Failed to transform regex into a grammar: Regex parsing error at position \d: The parenthesis is not closed\.$/],
    ["an error after a rewritten shorthand", { kind: "regex", pattern: "\\d\\d(" }, "Failed to transform regex into a grammar: Regex parsing error at position 6: The parenthesis is not closed."],
    ["a lookahead", { kind: "regex", pattern: "(?=a)b" }, /^Failed to transform regex into a grammar: .*Lookahead is not supported/],
    ["a NUL in a regex", { kind: "regex", pattern: "a\0" }, "structured_outputs.regex must not contain a NUL character ('\\x00')"],
    ["a class of CJK only", { kind: "regex", pattern: "[\\u4e00-\\u9fff]+" }, /^Failed to transform regex into a grammar: a character class is left with no character/],
    ["a schema with a bad type", { kind: "json_schema", schema: { type: 5 } }, "Failed to transform json schema into a grammar: Type should be a string"],
    ["the schema false", { kind: "json_schema", schema: false }, /^Failed to transform json schema into a grammar: Schema should not be false/],
    ["an unknown type", { kind: "json_schema", schema: { type: "date" } }, 'Failed to transform json schema into a grammar: Unsupported type "date"'],
    ["multipleOf", { kind: "json_schema", schema: { type: "integer", multipleOf: 2 } }, "The provided JSON schema contains features not supported by xgrammar. Unsupported: `multipleOf` at #."],
    ["whitespace_pattern", { kind: "json_object", options: { whitespacePattern: "[ ]?" } }, /^whitespace_pattern is not supported/],
    ["a grammar that does not parse", { kind: "grammar", grammar: 'root ::= "a" |' }, /^Invalid grammar specification\. EBNF parser error at line 1/],
    ["a grammar without root", { kind: "grammar", grammar: 'start ::= "a"' }, /^Invalid grammar specification\. .*The root rule with name "root" is not found/],
    ["a grammar with a non-ASCII class", { kind: "grammar", grammar: "root ::= [à-ÿ]+" }, /^Invalid grammar specification\. The character class \[à-ÿ\] has non-ASCII members/],
    ["an empty grammar", { kind: "grammar", grammar: "  \n " }, "structured_outputs.grammar cannot be an empty string"],
    ["a Lark grammar with a regex terminal", { kind: "grammar", grammar: "start: /a+/" }, /^Invalid grammar specification\. No line has '::=', so the grammar was read as Lark: line 1: regular-expression terminals/],
    ["an empty choice", { kind: "choice", choices: [] }, "Choice '[]' cannot be an empty list"],
    ["a structural tag that is not JSON", { kind: "structural_tag", spec: "{" }, /^Invalid structural tag specification\. It is not valid JSON/],
    ["a structural tag without a format", { kind: "structural_tag", spec: '{"type": "structural_tag"}' }, /^Invalid structural tag specification\. It needs a `format`/],
    ["a structural tag with an unknown format", { kind: "structural_tag", spec: '{"type": "structural_tag", "format": {"type": "nope"}}' }, /^Invalid structural tag specification\./],
    ["a legacy structural tag with a bad structure", { kind: "structural_tag", spec: '{"structures": [{"begin": "<a>"}], "triggers": ["<a"]}' }, /^Invalid structural tag specification\. structures\[0\] needs/],
    [
      "a structural tag with an unenforceable schema",
      { kind: "structural_tag", spec: JSON.stringify({ type: "structural_tag", format: { type: "json_schema", json_schema: { type: "array", uniqueItems: true } } }) },
      /^Invalid structural tag specification\. A JSON schema in it contains features not supported by xgrammar\. Unsupported: `uniqueItems`/,
    ],
  ])("%s", async (_name, constraint, message) => {
    const text = await failure(constraint);
    if (typeof message === "string") expect(text).toBe(message);
    else expect(text).toMatch(message);
  });
});

describe("checkConstraint", () => {
  it.each<StructuredConstraint>([
    { kind: "json_object" },
    { kind: "json_schema", schema: { type: "object", properties: { a: { type: "integer", minimum: 0 } } }, options: { disableAnyWhitespace: true, disableAdditionalProperties: true } },
    { kind: "regex", pattern: "\\d{3}-[a-z]+" },
    { kind: "choice", choices: ["a", 'b"c'] },
    { kind: "grammar", grammar: 'root ::= "a"+' },
    { kind: "grammar", grammar: "start: 'a'+" },
    { kind: "structural_tag", spec: '{"type":"structural_tag","structures":[{"begin":"<a>","schema":{"type":"object"},"end":"</a>"}],"triggers":["<a"]}' },
  ])("accepts %j", async (constraint) => {
    await expect(checkConstraint(constraint)).resolves.toBeDefined();
  });

  it("keeps answering after many refusals in a row (the checking instance is replaced now and then)", async () => {
    for (let i = 0; i < 150; i++) await expect(checkConstraint({ kind: "grammar", grammar: `root ::= rule${i}` })).rejects.toThrow(`Rule "rule${i}" is not defined`);
    await expect(checkConstraint({ kind: "grammar", grammar: 'root ::= "ok"' })).resolves.toBeDefined();
  });
});
