import { describe, expect, it } from "vitest";
import { BeamSearch, type BeamSearchOptions, type LiveBeam } from "./beam-search.js";

const EOS = 0;
const logitsOf = (probs: number[]) => Float32Array.from(probs, (p) => (p > 0 ? Math.log(p) : -Infinity));

/** A tiny "model": next-token probabilities by the tokens generated so far. */
const MODEL: Record<string, number[]> = {
  "": [0.1, 0.5, 0.3, 0.1],
  "1": [0.6, 0.2, 0.1, 0.1],
  "2": [0.05, 0.05, 0.1, 0.8],
};
const logitsFor = (beam: LiveBeam) => logitsOf(MODEL[beam.tokenIds.join(",")] ?? [0.25, 0.25, 0.25, 0.25]);

function search(overrides: Partial<BeamSearchOptions> = {}): BeamSearch {
  return new BeamSearch({
    width: 2,
    maxTokens: 2,
    lengthPenalty: 1,
    promptLength: 3,
    eosTokenIds: [EOS],
    ignoreEos: false,
    includeStopStrInOutput: false,
    logprobs: null,
    ...overrides,
  });
}

function runToEnd(beams: BeamSearch): void {
  while (!beams.done) beams.step(beams.live.map(logitsFor));
}

describe("BeamSearch", () => {
  it("expands each live beam and names the parent whose cache the new beam forks", () => {
    const beams = search({ maxTokens: 3 });
    expect(beams.live).toEqual([{ id: 0, parentId: -1, tokenIds: [], tokens: [], cumulativeLogprob: 0, finish: null }]);
    const first = beams.step(beams.live.map(logitsFor));
    expect(first.map((b) => b.tokenIds)).toEqual([[1], [2]]);
    expect(first.every((b) => b.parentId === 0)).toBe(true);
    const second = beams.step(first.map(logitsFor));
    // From [1]: EOS (.3) finishes; [1,1] .1, [1,2] .05, [1,3] .05. From [2]: [2,3] .24, [2,2] .03 …
    expect(second.map((b) => b.tokenIds)).toEqual([
      [2, 3],
      [1, 1],
    ]);
    expect(second.map((b) => b.parentId)).toEqual([first[1]!.id, first[0]!.id]);
    expect(second[0]!.cumulativeLogprob).toBeCloseTo(Math.log(0.24), 6);
  });

  it("ranks finished and live beams by cumulative logprob / L^length_penalty with L counting the prompt", () => {
    const beams = search();
    runToEnd(beams);
    const results = beams.results();
    // [2,3]: ln .24 / 5 = -0.2854; [1]+EOS: ln .3 / (3 + 2 - 1) = -0.3010; [1,1]: ln .1 / 5 = -0.4605.
    expect(results.map((r) => r.tokenIds)).toEqual([[2, 3], [1]]);
    expect(results[0]!.score).toBeCloseTo(Math.log(0.24) / 5, 6);
    expect(results[0]!.finish).toEqual({ finishReason: "length", stopReason: null });
    expect(results[1]!.score).toBeCloseTo(Math.log(0.3) / 4, 6);
    expect(results[1]!.cumulativeLogprob).toBeCloseTo(Math.log(0.3), 6);
    expect(results[1]!.finish).toEqual({ finishReason: "stop", stopReason: EOS });
  });

  it("with length_penalty 0 ranks by cumulative logprob alone", () => {
    const beams = search({ lengthPenalty: 0 });
    runToEnd(beams);
    expect(beams.results().map((r) => r.tokenIds)).toEqual([[1], [2, 3]]);
  });

  it("keeps EOS in the tokens only with include_stop_str_in_output, never in the text", () => {
    const beams = search({ lengthPenalty: 0, includeStopStrInOutput: true });
    runToEnd(beams);
    const [best] = beams.results();
    expect(best!.tokenIds).toEqual([1, EOS]);
    expect(best!.tokens.map((t) => t.tokenId)).toEqual([1, EOS]);
    expect(best!.textTokenIds).toEqual([1]);
    expect(best!.score).toBeCloseTo(Math.log(0.3), 6);
  });

  it("under ignore_eos treats EOS as an ordinary candidate", () => {
    const beams = search({ ignoreEos: true, maxTokens: 2 });
    beams.step(beams.live.map(logitsFor));
    const second = beams.step(beams.live.map(logitsFor));
    expect(second).toEqual([]);
    const results = beams.results();
    // [1,EOS] (.3) is now an ordinary candidate, but its L still drops the final EOS:
    // ln .3 / 4 = -0.301 against [2,3]: ln .24 / 5 = -0.285.
    expect(results.map((r) => r.tokenIds)).toEqual([
      [2, 3],
      [1, EOS],
    ]);
    expect(results[1]!.finish).toEqual({ finishReason: "length", stopReason: null });
    expect(results[1]!.textTokenIds).toEqual([1, EOS]);
  });

  it("prunes candidates by the same length-penalized score (it matters for EOS under ignore_eos)", () => {
    // EOS (.51) is likelier than token 1 (.49), but with prompt 10 and length_penalty 3 its L is
    // 10 against 11: ln .51 / 10^3 = -6.7e-4 loses to ln .49 / 11^3 = -5.4e-4.
    const penalized = search({ width: 1, ignoreEos: true, promptLength: 10, lengthPenalty: 3 });
    expect(penalized.step([logitsOf([0.51, 0.49, 0, 0])])[0]!.tokenIds).toEqual([1]);
    const plain = search({ width: 1, ignoreEos: true, promptLength: 10, lengthPenalty: 0 });
    expect(plain.step([logitsOf([0.51, 0.49, 0, 0])])[0]!.tokenIds).toEqual([EOS]);
  });

  it("records raw logprobs and the requested alternatives per token", () => {
    const beams = search({ logprobs: 2 });
    runToEnd(beams);
    const [best] = beams.results();
    expect(best!.tokens[0]!.logprob).toBeCloseTo(Math.log(0.3), 6);
    expect(best!.tokens[0]!.top!.map((t) => t.tokenId)).toEqual([1, 2]);
    expect(best!.tokens[1]!.top!.map((t) => t.tokenId)).toEqual([3, 2]);
  });

  it("never expands into tokens a mask forbids", () => {
    const beams = search({ width: 1, maxTokens: 1 });
    beams.step([logitsOf([0.1, 0.5, 0.3, 0.1])], [Int32Array.from([0b1100])]);
    expect(beams.results().map((r) => r.tokenIds)).toEqual([[2]]);
  });

  it("ends early when every candidate finished, and rejects misaligned logits", () => {
    const beams = search({ width: 1, maxTokens: 5 });
    expect(() => beams.step([])).toThrow(/logits for 1 beams/);
    beams.step([logitsOf([0.9, 0.1, 0, 0])]); // candidates EOS and 1: beam [1] lives
    beams.step([logitsOf([1, 0, 0, 0])]); // only EOS is possible
    expect(beams.done).toBe(true);
    expect(beams.results()[0]!.finish).toEqual({ finishReason: "stop", stopReason: EOS });
  });
});
