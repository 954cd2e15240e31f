import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { type DetokenizerOptions, detokenize, IncrementalDetokenizer } from "./detokenizer.js";

const tokenizer = new ByteTokenizer();
const id = (token: string) => tokenizer.tokenId(token)!;
const bytes = (text: string) => [...new TextEncoder().encode(text)];
const options = (overrides: Partial<DetokenizerOptions> = {}): DetokenizerOptions => ({
  skipSpecialTokens: true,
  spacesBetweenSpecialTokens: true,
  stop: [],
  includeStopStrInOutput: false,
  minTokens: 0,
  ...overrides,
});

/** Feeds tokens one at a time; returns the deltas, the stop string and the final text. */
function stream(ids: number[], overrides: Partial<DetokenizerOptions> = {}, stopTerminatedLast = false) {
  const detokenizer = new IncrementalDetokenizer(tokenizer, options(overrides));
  const deltas: string[] = [];
  let stop: string | null = null;
  for (let i = 0; i < ids.length && stop === null; i++) {
    stop = detokenizer.update([ids[i]!], stopTerminatedLast && i === ids.length - 1);
    deltas.push(detokenizer.takeText(stop !== null || i === ids.length - 1));
  }
  return { deltas, stop, text: detokenizer.outputText };
}

describe("IncrementalDetokenizer: text", () => {
  it("streams text whose deltas add up to the decoded tokens", () => {
    const ids = tokenizer.encode("hello world, the end");
    const { deltas, text } = stream(ids);
    expect(text).toBe("hello world, the end");
    expect(deltas.join("")).toBe(text);
    expect(deltas[0]).toBe("hello");
  });

  it("holds back a character split across tokens until it completes", () => {
    const { deltas } = stream([...bytes("é€"), ...bytes("!")]);
    expect(deltas).toEqual(["", "é", "", "", "€", "!"]);
  });

  it("shows an invalid byte as U+FFFD and drops a character left incomplete at the end", () => {
    expect(stream([0xa9, ...bytes("a")]).text).toBe("\ufffda");
    expect(stream([...bytes("ok"), 0xe2, 0x82]).text).toBe("ok");
  });

  it("keeps a leading byte-order mark as text", () => {
    expect(stream(bytes("\ufeffx")).text).toBe("\ufeffx");
  });

  it("skips special tokens, or keeps them separated by spaces, or kept as-is", () => {
    const ids = [...tokenizer.encode("hi"), id("<|im_start|>"), ...tokenizer.encode("there"), id("<|im_end|>")];
    expect(stream(ids).text).toBe("hithere");
    expect(stream(ids, { skipSpecialTokens: false }).text).toBe("hi <|im_start|> there <|im_end|>");
    expect(stream(ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false }).text).toBe("hi<|im_start|>there<|im_end|>");
    expect(stream([id("<|im_start|>"), id("<|im_end|>")], { skipSpecialTokens: false }).text).toBe("<|im_start|> <|im_end|>");
  });

  it("leaves out the text of a terminating stop token unless include_stop_str_in_output", () => {
    const ids = [...tokenizer.encode("done."), id("<|endoftext|>")];
    expect(stream(ids, { skipSpecialTokens: false }, true).text).toBe("done.");
    expect(stream(ids, { skipSpecialTokens: false, includeStopStrInOutput: true }, true).text).toBe("done. <|endoftext|>");
    expect(stream(ids, { includeStopStrInOutput: true }, true).text).toBe("done.");
    // An ordinary stop token id (here "!") is likewise left out.
    expect(stream(tokenizer.encode("yes!"), {}, true).text).toBe("yes");
  });
});

describe("IncrementalDetokenizer: stop strings", () => {
  it("cuts at the match, or after it with include_stop_str_in_output", () => {
    const ids = bytes("hello world");
    expect(stream(ids, { stop: ["wor"] })).toMatchObject({ stop: "wor", text: "hello " });
    expect(stream(ids, { stop: ["wor"], includeStopStrInOutput: true })).toMatchObject({ stop: "wor", text: "hello wor" });
  });

  it("drops text after the stop string within the same token", () => {
    const ids = tokenizer.encode("say hello!");
    expect(stream(ids, { stop: ["ll"] })).toMatchObject({ stop: "ll", text: "say he" });
  });

  it("never streams a partial stop string: max(len(stop)) − 1 characters wait", () => {
    const { deltas, text } = stream(bytes("abcxyzdef"), { stop: ["xyz!", "q"] });
    // Hold back 3: nothing shows until 4 characters exist, and the "xyz" prefix never goes out early.
    expect(deltas.slice(0, 4)).toEqual(["", "", "", "a"]);
    expect(deltas.slice(0, 6).join("")).toBe("abc");
    expect(deltas.join("")).toBe(text);
    expect(text).toBe("abcxyzdef");
  });

  it("with include_stop_str_in_output nothing is held back", () => {
    const { deltas } = stream(bytes("abc"), { stop: ["xyz"], includeStopStrInOutput: true });
    expect(deltas).toEqual(["a", "b", "c"]);
  });

  it("picks the first stop string in list order, not the earliest match", () => {
    const custom = new ByteTokenizer(["ab cd"]);
    const detokenizer = new IncrementalDetokenizer(custom, options({ stop: ["cd", "ab"] }));
    expect(detokenizer.update(custom.encode("ab cd"), false)).toBe("cd");
    expect(detokenizer.outputText).toBe("ab ");
  });

  it("finds a stop string spanning tokens", () => {
    expect(stream(tokenizer.encode("hello world"), { stop: ["o w"] })).toMatchObject({ stop: "o w", text: "hell" });
  });

  it("ignores stop strings in the text of the first min_tokens tokens", () => {
    expect(stream(bytes("abab"), { stop: ["a"], minTokens: 2 })).toMatchObject({ stop: "a", text: "ab" });
    // A match that starts inside the min_tokens text but ends after it still counts.
    expect(stream(bytes("xaby"), { stop: ["ab"], minTokens: 2 })).toMatchObject({ stop: "ab", text: "x" });
  });

  it("never splits a surrogate pair when holding back", () => {
    const { deltas, text } = stream(bytes("a😀b"), { stop: ["zz"] });
    for (const delta of deltas) expect(delta).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
    expect(deltas.join("")).toBe(text);
  });
});

describe("detokenize", () => {
  it("decodes a whole token list like the stream would", () => {
    const ids = [...tokenizer.encode("a€"), id("<|im_end|>"), 0xe2];
    expect(detokenize(tokenizer, ids, { skipSpecialTokens: true, spacesBetweenSpecialTokens: true })).toBe("a€");
    expect(detokenize(tokenizer, ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: true })).toBe("a€ <|im_end|>");
  });
});
