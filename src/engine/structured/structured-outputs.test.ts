import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { biasTowards, randomWalk, type WalkResult } from "../../testing/constrained-walk.js";
import { syntheticTokenizer } from "../../testing/synthetic-vocabulary.js";
import { StructuredOutputError } from "./errors.js";
import { StructuredOutputs } from "./structured-outputs.js";
import type { StructuredConstraint } from "./types.js";

const PIECES = [
  '{"',
  '"}',
  '": ',
  '":',
  '", "',
  ', "',
  "true",
  "false",
  "null",
  "[]",
  "{}",
  "name",
  "age",
  "tags",
  " the",
  "ing",
  "12",
  "00",
  "positive",
  "negative",
  "neg",
  "é",
  "€",
  "<answer>",
  "</answer>",
  "<tool_call>",
  "get_weather",
  "city",
  "Paris",
];
const tokenizer = new ByteTokenizer(PIECES);
const EOS = tokenizer.eosTokenId;
const IM_END = tokenizer.tokenId("<|im_end|>")!;
const IM_START = tokenizer.tokenId("<|im_start|>")!;
const STOPS = [EOS, IM_END];
// The model's logits are wider than the tokenizer, and not a multiple of 32.
const VOCAB_SIZE = tokenizer.vocabSize + 13;
const WALKS = 120;

let outputs: StructuredOutputs;

beforeAll(async () => {
  outputs = await StructuredOutputs.create({ tokenizer, vocabSize: VOCAB_SIZE, stopTokenIds: STOPS });
});
afterAll(() => outputs?.dispose());

/** Runs `WALKS` seeded walks and returns the finished outputs (most of them must finish). */
async function walks(constraint: StructuredConstraint, bias: Float32Array, maxTokens = 200): Promise<WalkResult[]> {
  const finished: WalkResult[] = [];
  for (let seed = 1; seed <= WALKS; seed++) {
    const matcher = await outputs.createMatcher(constraint);
    try {
      const walk = await randomWalk(matcher, tokenizer, { seed, maxTokens, stopTokenIds: STOPS, bias });
      if (walk.finished) finished.push(walk);
    } finally {
      matcher.dispose();
    }
  }
  expect(finished.length).toBeGreaterThanOrEqual(WALKS * 0.8);
  return finished;
}

const closers = (chars = '"}],') => biasTowards(tokenizer, VOCAB_SIZE, chars, 4, STOPS);

describe("constrained random walks: every finished output satisfies its constraint", () => {
  it("json schema", async () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, maxLength: 12 },
        age: { type: "integer", minimum: 0, maximum: 150 },
        score: { type: "number" },
        level: { type: "integer", exclusiveMinimum: 2 },
        delta: { type: "integer", maximum: -3 },
        code: { type: "string", pattern: "^[^@]{1,4}@.$" },
        quote: { type: "string", pattern: '^say "[a-z]{1,3}"\\?$' },
        tags: { type: "array", items: { type: "string", enum: ["a", "b", "é"] }, minItems: 1, maxItems: 3 },
        kind: { const: "person" },
        nickname: { type: ["string", "null"], pattern: "^[a-z]{2,4}$" },
        address: { $ref: "#/$defs/address" },
        contact: { anyOf: [{ type: "boolean" }, { type: "object", properties: { phone: { type: "string", pattern: "^[0-9]{3}$" } }, required: ["phone"] }] },
      },
      required: ["name", "age", "tags", "kind", "address"],
      $defs: { address: { type: "object", properties: { city: { type: "string", maxLength: 5 }, zip: { type: "integer" } }, required: ["city"] } },
    };
    const validate = new Ajv({ strict: false }).compile(schema);
    const finished = await walks({ kind: "json_schema", schema }, closers('"}],0123456789@'), 400);
    for (const { text } of finished) {
      const value = JSON.parse(text);
      expect(validate(value), `${text}\n${JSON.stringify(validate.errors)}`).toBe(true);
      // xgrammar's strict mode: no properties beyond the schema's.
      expect(Object.keys(value).every((key) => key in schema.properties)).toBe(true);
    }
  });

  it("json schema without whitespace", async () => {
    const schema = { type: "object", properties: { a: { type: "array", items: { type: "integer" } }, b: { type: "boolean" } }, required: ["a", "b"] };
    const finished = await walks({ kind: "json_schema", schema, options: { disableAnyWhitespace: true } }, closers("]},"));
    for (const { text } of finished) {
      const value = JSON.parse(text);
      expect(new Ajv().validate(schema, value)).toBe(true);
      // Only xgrammar's fixed separators: ", " and ": ", no other whitespace.
      expect(text).toBe(JSON.stringify(value).replace(/,/g, ", ").replace(/":/g, '": '));
    }
  });

  it("any JSON object", async () => {
    const finished = await walks({ kind: "json_object" }, closers('"}]'));
    for (const { text } of finished) {
      const value = JSON.parse(text);
      expect(typeof value === "object" && value !== null && !Array.isArray(value), text).toBe(true);
    }
  });

  it.each([
    ["\\d{3}-\\d{4}", ""],
    ["[a-z]+@[a-z]+\\.(com|org)", "@.mo"],
    ["(ab|cd)*e?", "e"],
    ["[A-Z][a-z]{0,5}( [A-Z][a-z]{0,5}){0,2}", " "],
    ["(é|€|x){1,4}!", "!"],
  ])("regex %s", async (pattern, favoured) => {
    const finished = await walks({ kind: "regex", pattern }, closers(favoured));
    const fullMatch = new RegExp(`^(?:${pattern})$`, "u");
    for (const { text } of finished) expect(text).toMatch(fullMatch);
  });

  it("choice, with quotes, backslashes, newlines, prefixes of each other and the empty string", async () => {
    const choices = ["positive", "negative", "neg", 'say "hi"', "back\\slash", "two\nlines", "tab\there", "é€", ""];
    const finished = await walks({ kind: "choice", choices }, closers(""));
    for (const { text } of finished) expect(choices).toContain(text);
    expect(new Set(finished.map((walk) => walk.text)).size).toBeGreaterThan(4);
  });

  it("EBNF grammar (arithmetic expressions, checked by a recursive-descent parser)", async () => {
    const grammar = ["root ::= expr", 'expr ::= term (("+" | "-") term)*', 'term ::= factor (("*" | "/") factor)*', 'factor ::= [0-9]+ | "(" expr ")"'].join("\n");
    const finished = await walks({ kind: "grammar", grammar }, closers(")"));
    for (const { text } of finished) expect(isArithmetic(text), text).toBe(true);
  });

  it("Lark grammar (converted to EBNF), checked independently", async () => {
    const grammar = ["start: list", 'list: "[" [item ("," item)*] "]"', "item: NUMBER | list | WORD", "WORD: ('a'..'z')~1..3", "%import common.INT -> NUMBER"].join("\n");
    const finished = await walks({ kind: "grammar", grammar }, closers("]"));
    for (const { text } of finished) expect(isNestedList(text), text).toBe(true);
  });

  it("structural tag (format)", async () => {
    const spec = JSON.stringify({
      type: "structural_tag",
      format: { type: "tag", begin: "<answer>", content: { type: "json_schema", json_schema: { type: "object", properties: { city: { type: "string", maxLength: 8 } }, required: ["city"] } }, end: "</answer>" },
    });
    const finished = await walks({ kind: "structural_tag", spec }, closers('"}>'));
    for (const { text } of finished) {
      const match = /^<answer>([\s\S]*)<\/answer>$/.exec(text);
      expect(match, text).not.toBeNull();
      expect(typeof JSON.parse(match![1]!).city).toBe("string");
    }
  });

  it("structural tag (vLLM's legacy structures and triggers)", async () => {
    const spec = JSON.stringify({
      type: "structural_tag",
      structures: [{ begin: "<function=get_weather>", schema: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Oslo"] } }, required: ["city"] }, end: "</function>" }],
      triggers: ["<function="],
    });
    const bias = closers('"}<');
    const finished = await walks({ kind: "structural_tag", spec }, bias);
    for (const { text } of finished) {
      // Free text, except that every "<function=" opens a complete, valid call.
      const calls = text.split("<function=").slice(1);
      for (const call of calls) {
        const match = /^get_weather>(\{[\s\S]*?\})<\/function>/.exec(call);
        expect(match, text).not.toBeNull();
        expect(["Paris", "Oslo"]).toContain(JSON.parse(match![1]!).city);
      }
    }
  });
});

describe("StructuredOutputs", () => {
  it("masks padding ids and special tokens, and allows stop tokens only where the output is complete", async () => {
    const matcher = await outputs.createMatcher({ kind: "choice", choices: ["neg", "negative"] });
    const first = await matcher.nextTokenMask();
    for (let id = tokenizer.vocabSize; id < VOCAB_SIZE; id++) expect(first.allows(id)).toBe(false);
    expect(first.allows(IM_START)).toBe(false);
    expect(first.allows(EOS)).toBe(false);
    expect(first.allows(tokenizer.tokenId("neg")!)).toBe(true);
    expect(matcher.accept(EOS)).toBe(false);
    expect(matcher.accept(tokenizer.tokenId("neg")!)).toBe(true);
    const afterNeg = await matcher.nextTokenMask();
    expect(afterNeg.allows(EOS) && afterNeg.allows(IM_END)).toBe(true); // "neg" is complete…
    expect(afterNeg.allows(tokenizer.tokenId("a")!)).toBe(true); // …and "negative" goes on
    expect(afterNeg.allows(tokenizer.tokenId("b")!)).toBe(false);
    expect(matcher.accept(IM_END)).toBe(true);
    expect(matcher.isTerminated).toBe(true);
    expect(matcher.accept(EOS)).toBe(false);
    await expect(matcher.nextTokenMask()).rejects.toThrow(/already accepted a stop token/);
    matcher.dispose();
  });

  it("forks a matcher into an independent copy at the same position, and rolls back", async () => {
    const ids = (text: string) => tokenizer.encode(text);
    const matcher = await outputs.createMatcher({ kind: "choice", choices: ["ab", "ac"] });
    expect(matcher.accept(ids("a")[0]!)).toBe(true);
    const copy = await matcher.fork();
    expect(copy.acceptedTokens).toEqual(ids("a"));
    expect(matcher.accept(ids("b")[0]!)).toBe(true);
    expect(copy.accept(ids("c")[0]!)).toBe(true);
    expect(matcher.accept(ids("c")[0]!)).toBe(false);
    matcher.rollback(1);
    expect(matcher.accept(ids("c")[0]!)).toBe(true);
    expect(() => matcher.rollback(5)).toThrow(RangeError);
    matcher.dispose();
    expect(copy.accept(EOS)).toBe(true);
    copy.dispose();
    expect(() => copy.accept(EOS)).toThrow(/disposed/);
  });

  it("refuses tokens outside the logits width without touching the state", async () => {
    const matcher = await outputs.createMatcher({ kind: "regex", pattern: "a+" });
    expect(matcher.accept(VOCAB_SIZE)).toBe(false);
    expect(matcher.accept(-1)).toBe(false);
    expect(matcher.accept(tokenizer.vocabSize + 1)).toBe(false); // padding
    expect(matcher.acceptedTokens).toEqual([]);
    matcher.dispose();
  });

  it("keeps matchers working when their grammar leaves the cache", async () => {
    const small = await StructuredOutputs.create({ tokenizer, vocabSize: VOCAB_SIZE, stopTokenIds: STOPS, cacheSize: 1 });
    const [first, second] = await Promise.all([small.createMatcher({ kind: "regex", pattern: "x+" }), small.createMatcher({ kind: "regex", pattern: "y+" })]);
    await small.createMatcher({ kind: "regex", pattern: "z+" }).then((third) => third.dispose());
    small.dispose();
    expect(first!.accept(tokenizer.tokenId("x")!)).toBe(true);
    expect((await first!.nextTokenMask()).allows(EOS)).toBe(true);
    expect(second!.accept(tokenizer.tokenId("y")!)).toBe(true);
    const fork = await second!.fork();
    expect(fork.accept(EOS)).toBe(true);
    for (const matcher of [first!, second!, fork]) matcher.dispose();
  });

  it("reports a bad constraint with vLLM's message from check() and createMatcher()", async () => {
    await expect(outputs.check({ kind: "regex", pattern: "(a" })).rejects.toThrow(StructuredOutputError);
    await expect(outputs.createMatcher({ kind: "grammar", grammar: "root ::= nothing" })).rejects.toThrow(/^Invalid grammar specification\. .*Rule "nothing" is not defined/);
    await expect(outputs.check({ kind: "json_schema", schema: { type: "object" } })).resolves.toBeUndefined();
  });

  it("refuses options it cannot build", async () => {
    await expect(StructuredOutputs.create({ tokenizer, vocabSize: 10 })).rejects.toThrow(RangeError);
    await expect(StructuredOutputs.create({ tokenizer, stopTokenIds: [VOCAB_SIZE + 5] })).rejects.toThrow(/outside the vocabulary/);
  });
});

/** expr := term (("+"|"-") term)*, term := factor (("*"|"/") factor)*, factor := digits | "(" expr ")". */
function isArithmetic(text: string): boolean {
  let position = 0;
  const factor = (): boolean => {
    if (text[position] === "(") {
      position++;
      if (!expr() || text[position] !== ")") return false;
      position++;
      return true;
    }
    const start = position;
    while (/[0-9]/.test(text[position] ?? "")) position++;
    return position > start;
  };
  const chain = (operand: () => boolean, operators: string): boolean => {
    if (!operand()) return false;
    while (operators.includes(text[position] ?? "\0")) {
      position++;
      if (!operand()) return false;
    }
    return true;
  };
  const term = () => chain(factor, "*/");
  const expr = (): boolean => chain(term, "+-");
  return expr() && position === text.length;
}

/** list := "[" (item ("," item)*)? "]", item := digits | list | 1–3 lowercase letters. */
function isNestedList(text: string): boolean {
  let position = 0;
  const item = (): boolean => {
    if (text[position] === "[") return list();
    const digits = /^[0-9]+/.exec(text.slice(position));
    const word = /^[a-z]{1,3}(?![a-z])/.exec(text.slice(position));
    const match = digits ?? word;
    if (!match) return false;
    position += match[0].length;
    return true;
  };
  const list = (): boolean => {
    if (text[position++] !== "[") return false;
    if (text[position] === "]") return ++position > 0;
    if (!item()) return false;
    while (text[position] === ",") {
      position++;
      if (!item()) return false;
    }
    return text[position++] === "]";
  };
  return list() && position === text.length;
}

describe("a vocabulary of real size", () => {
  it("builds, compiles and masks for 150k tokens padded to 151,936 logits", async () => {
    const big = syntheticTokenizer(150_000);
    const stops = [big.eosTokenId];
    const width = 151_936;
    const large = await StructuredOutputs.create({ tokenizer: big, vocabSize: width, stopTokenIds: stops });
    const schema = { type: "object", properties: { name: { type: "string", maxLength: 10 }, n: { type: "integer", minimum: 0, maximum: 99 } }, required: ["name", "n"] };
    const bias = biasTowards(big, width, '"}', 6, stops);
    let finished = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const matcher = await large.createMatcher({ kind: "json_schema", schema });
      const mask = await matcher.nextTokenMask();
      expect(mask.words).toHaveLength(Math.ceil(width / 32));
      const walk = await randomWalk(matcher, big, { seed, maxTokens: 80, stopTokenIds: stops, bias });
      matcher.dispose();
      if (!walk.finished) continue;
      finished++;
      const value = JSON.parse(walk.text);
      expect(new Ajv().validate(schema, value), walk.text).toBe(true);
    }
    expect(finished).toBeGreaterThan(0);
    large.dispose();
  });
});
