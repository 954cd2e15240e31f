import type { Grammar } from "@mlc-ai/web-xgrammar";
import { beforeAll, describe, expect, it } from "vitest";
import { jsonStringRegex, xgrammarRegex } from "./regex-rewrite.js";
import { XgrammarRuntime } from "./xgrammar.js";

let runtime: XgrammarRuntime;
beforeAll(async () => {
  runtime = await XgrammarRuntime.load();
});

async function regexGrammar(pattern: string): Promise<Grammar> {
  return runtime.api.Grammar.fromStructuralTag(JSON.stringify({ type: "structural_tag", format: { type: "regex", pattern } }));
}

async function accepted(pattern: string, samples: string[]): Promise<string[]> {
  const grammar = await regexGrammar(pattern);
  const out: string[] = [];
  for (const sample of samples) if (await runtime.api.Testings.isGrammarAcceptString(grammar, sample)) out.push(sample);
  grammar.dispose();
  return out;
}

const SAMPLES = ["a", "ab", "a1", "a 1", "a\t1", "é", "€", "中", "😀", "\n", " ", '"', "\\", "x\ty", "éa", "\u00a0"];

describe("xgrammarRegex", () => {
  it("shows the xgrammar bug it works around: non-ASCII class members are matched wrongly", async () => {
    expect(await accepted("[\\u4e00-\\u9fff]", ["a", "中"])).toEqual(["a"]);
    expect(await accepted("[^a-zé]", ["é"])).toEqual(["é"]);
  });

  it.each(["[a-zé€]{1,3}", ".+", "[^a-z]+", "\\w+\\s\\d", "(é|€|x){1,4}", "[^\\u0000-\\u007f]+"])("%s: xgrammar matches exactly what the pattern means", async (pattern) => {
    const meaning = new RegExp(`^(?:${pattern})$`, "su");
    expect(await accepted(xgrammarRegex(pattern), SAMPLES)).toEqual(SAMPLES.filter((sample) => meaning.test(sample)));
  });

  it.each(["[^\\u4e00-\\u9fff]", "[^a-zé]+"])("%s: a large, partial non-ASCII part narrows to ASCII (never wider)", async (pattern) => {
    const meaning = new RegExp(`^(?:${pattern})$`, "su");
    const matched = await accepted(xgrammarRegex(pattern), SAMPLES);
    expect(matched.every((sample) => meaning.test(sample))).toBe(true);
    expect(matched).toContain(" ");
    expect(matched).not.toContain("€");
  });

  it("refuses a class left with no character", () => {
    expect(() => xgrammarRegex("[\\u4e00-\\u9fff]+")).toThrow(/no character/);
  });

  it("keeps syntax it does not rewrite", () => {
    expect(xgrammarRegex("^(?:ab|c)+d{2,3}?$")).toBe("^(?:ab|c)+d{2,3}?$");
    expect(xgrammarRegex("(a)\\1")).toBe("(a)\\1");
  });
});

describe("jsonStringRegex", () => {
  const VALUES = ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "é", "😀", "\u0001", "plain", "a@b", "12345", "中文"];
  const body = (value: string) => JSON.stringify(value).slice(1, -1);

  it.each(["^[^\\n]*$", "^[^@]*$", '^say "[a-z]+"$', "^[\\s\\S]{0,5}$", "^\\d+$", "^[a-z\\\\]+$", "^[\\t a-z]+$"])("%s: matches exactly the JSON spellings of the values the pattern matches", async (pattern) => {
    const meaning = new RegExp(pattern, "u");
    const rewritten = jsonStringRegex(pattern);
    const matched = await accepted(rewritten, VALUES.map(body));
    expect(matched).toEqual(VALUES.filter((value) => meaning.test(value)).map(body));
  });

  it("accepts both short and \\u escapes of a control character, and never a raw one", async () => {
    const rewritten = jsonStringRegex("^a\\nb$");
    expect(await accepted(rewritten, ["a\\nb", "a\\u000ab", "a\\u000Ab", "a\nb"])).toEqual(["a\\nb", "a\\u000ab", "a\\u000Ab"]);
  });

  // JavaScript's `.` leaves out U+2028/U+2029 and \S the non-ASCII spaces: partial non-ASCII sets.
  it.each(["^.*$", "^\\S+$"])("%s: a large, partial non-ASCII part narrows to ASCII (never wider)", async (pattern) => {
    const meaning = new RegExp(pattern, "u");
    const matched = await accepted(jsonStringRegex(pattern), VALUES.map(body));
    expect(matched).toContain("plain");
    expect(matched).not.toContain("é");
    for (const spelled of matched) expect(meaning.test(JSON.parse(`"${spelled}"`))).toBe(true);
  });
});
