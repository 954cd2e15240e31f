import { beforeAll, describe, expect, it } from "vitest";
import { LarkConversionError } from "./errors.js";
import { larkToEbnf, looksLikeLark } from "./lark.js";
import { XgrammarRuntime } from "./xgrammar.js";

let runtime: XgrammarRuntime;
beforeAll(async () => {
  runtime = await XgrammarRuntime.load();
});

/** Which samples the converted grammar accepts, as xgrammar runs it. */
async function accepted(lark: string, samples: string[]): Promise<string[]> {
  const grammar = await runtime.api.Grammar.fromEBNF(larkToEbnf(lark));
  const out: string[] = [];
  for (const sample of samples) if (await runtime.api.Testings.isGrammarAcceptString(grammar, sample)) out.push(sample);
  grammar.dispose();
  return out;
}

describe("looksLikeLark", () => {
  it("is true unless a line outside comments has ::=", () => {
    expect(looksLikeLark("start: 'a'")).toBe(true);
    expect(looksLikeLark('root ::= "a"')).toBe(false);
    expect(looksLikeLark("// x ::= y\nstart: 'a'")).toBe(true);
  });
});

describe("larkToEbnf", () => {
  it("converts rules, continuation lines, quotes and aliases, rooted at start", () => {
    const lark = ["?start: greeting", "greeting: 'hello' name -> hi", '    | "bye" name', "name: NAME", 'NAME: "bob"i // a comment'].join("\n");
    expect(larkToEbnf(lark)).toBe(["root ::= start", "start ::= greeting", 'greeting ::= "hello" name | "bye" name', "name ::= NAME", "NAME ::= [bB] [oO] [bB]"].join("\n"));
  });

  it("keeps the language: optional, repetition counts, ranges, groups, escapes", async () => {
    const lark = ['start: "x" [sign] DIGIT~2..3 ("," WORD)*', 'sign: "+" | "-"', 'DIGIT: "0".."9"', "WORD: LETTER+", 'LETTER: "a".."c" | "\\u00e9"'];
    const samples = ["x12", "x+123", "x-1234", "x1", "x12,a", "x12,ab,é", "x12,", "x12,d", "x+-12"];
    expect(await accepted(lark.join("\n"), samples)).toEqual(["x12", "x+123", "x12,a", "x12,ab,é"]);
  });

  it("uses the first rule when there is no start, and renames a rule called root", async () => {
    const ebnf = larkToEbnf("root: inner inner\ninner: 'a'");
    expect(ebnf.split("\n")[0]).toBe("root ::= lark_root");
    expect(await accepted("root: inner inner\ninner: 'a'", ["a", "aa", "aaa"])).toEqual(["aa"]);
  });

  it("imports Lark's common terminals", async () => {
    const lark = ["start: SIGNED_NUMBER (WS_INLINE CNAME)?", "%import common.SIGNED_NUMBER", "%import common (WS_INLINE, CNAME)"].join("\n");
    expect(await accepted(lark, ["-1.5e3", "42 abc_1", "+.5", "1.", "1e", "abc", "42  _x"])).toEqual(["-1.5e3", "42 abc_1", "+.5", "1.", "42  _x"]);
  });

  it("spells non-ASCII ranges and letters as literals, which xgrammar matches correctly", async () => {
    expect(await accepted("start: ('à'..'ä')+ 'É'i", ["àäé", "àÉ", "åé", "àe"])).toEqual(["àäé", "àÉ"]);
  });

  it.each([
    ["start: /[a-z]+/", "line 1: regular-expression terminals"],
    ["start: WORD\n%import common.WORD\n%ignore WS", "line 3: %ignore needs a lexer"],
    ["start: a", "line 1: 'a' is not defined"],
    ["start: 'a'\nstart: 'b'", "line 2: 'start' is defined twice"],
    ["start{x}: x", "templates"],
    ["start: 'a", "unterminated string"],
    ["start: ('a'..'\\u4e00')", "more than 256 characters"],
    ["%import common.FOO", "common.FOO is not one of the supported common terminals"],
    ["// only a comment", "no rules found"],
  ])("refuses %j with the reason", (lark, reason) => {
    expect(() => larkToEbnf(lark)).toThrow(LarkConversionError);
    expect(() => larkToEbnf(lark)).toThrow(reason);
  });
});
