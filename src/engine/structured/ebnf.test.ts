import { beforeAll, describe, expect, it } from "vitest";
import { choiceGrammar, ebnfLiteral, hasLoneSurrogate, nonAsciiCharClass } from "./ebnf.js";
import { XgrammarRuntime } from "./xgrammar.js";

let runtime: XgrammarRuntime;
beforeAll(async () => {
  runtime = await XgrammarRuntime.load();
});

describe("ebnfLiteral and choiceGrammar", () => {
  const tricky = ['say "hi"', "back\\slash", "two\nlines", "cr\r tab\t", "bell\u0007", "del\u007f", "é😀", "", "\\n"];

  it("matches exactly the choices, whatever characters they hold", async () => {
    const grammar = await runtime.api.Grammar.fromEBNF(choiceGrammar(tricky));
    for (const choice of tricky) expect(await runtime.api.Testings.isGrammarAcceptString(grammar, choice)).toBe(true);
    for (const other of ["say hi", "back\\\\slash", "\n", "\\", "é"]) expect(await runtime.api.Testings.isGrammarAcceptString(grammar, other)).toBe(false);
    grammar.dispose();
  });

  it("escapes quotes, backslashes and control characters", () => {
    expect(ebnfLiteral('a"b\\c\nd\u0001')).toBe('"a\\"b\\\\c\\nd\\x01"');
  });
});

describe("nonAsciiCharClass", () => {
  it("finds a class with a non-ASCII member, raw or escaped, and ignores strings and comments", () => {
    expect(nonAsciiCharClass("root ::= [a-zé]+")).toBe("[a-zé]");
    expect(nonAsciiCharClass("root ::= [\\u4e00-\\u9fff]")).toBe("[\\u4e00-\\u9fff]");
    expect(nonAsciiCharClass('root ::= [^\\x00-\\x1f"\\\\] "[é]" # [é]\n')).toBeUndefined();
    expect(nonAsciiCharClass('root ::= "é" | [a-z]')).toBeUndefined();
  });
});

describe("hasLoneSurrogate", () => {
  it("tells unpaired surrogates from pairs", () => {
    expect(hasLoneSurrogate("a\ud800b")).toBe(true);
    expect(hasLoneSurrogate("\udc00")).toBe(true);
    expect(hasLoneSurrogate("😀")).toBe(false);
  });
});
