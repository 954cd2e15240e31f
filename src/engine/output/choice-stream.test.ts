import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { Rng } from "../sampling/rng.js";
import { Sampler } from "../sampling/sampler.js";
import { ChoiceStream, type ChoiceStep } from "./choice-stream.js";

const tokenizer = new ByteTokenizer();
const EOS = tokenizer.eosTokenId;
const IM_END = tokenizer.tokenId("<|im_end|>")!;
const sampler = new Sampler(Rng.fromSeed(5));

/** Logits that make `tokenId` overwhelmingly likely (the "model" wants to say it). */
function wants(tokenId: number): Float32Array {
  const logits = new Float32Array(tokenizer.vocabSize);
  logits[tokenId] = 20;
  return logits;
}

function choice(params: Partial<SamplingParams>, extraEos: number[] = []): ChoiceStream {
  return new ChoiceStream({
    params: defaultSamplingParams({ temperature: 0, maxTokens: 50, ...params }),
    promptTokenIds: tokenizer.encode("prompt"),
    eosTokenId: EOS,
    extraEosTokenIds: extraEos,
    tokenizer,
    sampler,
  });
}

/** Runs the choice while the model "wants" to say `script` token by token. */
function run(stream: ChoiceStream, script: number[]): ChoiceStep[] {
  const steps: ChoiceStep[] = [];
  for (const tokenId of script) {
    if (stream.finish) break;
    steps.push(stream.step(wants(tokenId)));
  }
  return steps;
}

describe("ChoiceStream", () => {
  it("ends on EOS: the token is reported, its text is not", () => {
    const steps = run(choice({ skipSpecialTokens: false }), [...tokenizer.encode("hi there"), EOS, 65]);
    expect(steps.map((s) => s.token.tokenId)).toEqual([...tokenizer.encode("hi there"), EOS]);
    expect(steps.map((s) => s.text).join("")).toBe("hi there");
    expect(steps.at(-1)!.finish).toEqual({ finishReason: "stop", stopReason: null });
  });

  it("ends on a model's extra EOS id with stop_reason = the id", () => {
    const steps = run(choice({}, [IM_END]), [...tokenizer.encode("ok"), IM_END]);
    expect(steps.at(-1)!.finish).toEqual({ finishReason: "stop", stopReason: IM_END });
  });

  it("ends on a stop string with the text cut and the stop string as stop_reason", () => {
    const stream = choice({ stop: ["world"] });
    const steps = run(stream, tokenizer.encode("hello world and more"));
    expect(steps.map((s) => s.token.tokenId)).toEqual(tokenizer.encode("hello world"));
    expect(steps.map((s) => s.text).join("")).toBe("hello ");
    expect(stream.finish).toEqual({ finishReason: "stop", stopReason: "world" });
  });

  it("a stop string found in the last allowed token still reports stop, not length", () => {
    const stream = choice({ stop: ["b"], maxTokens: 2 });
    run(stream, tokenizer.encode("ab"));
    expect(stream.finish).toEqual({ finishReason: "stop", stopReason: "b" });
    expect(stream.text).toBe("a");
  });

  it("keeps generating through EOS before min_tokens, and through EOS under ignore_eos", () => {
    // The model wants EOS first; min_tokens bans it, so the runner-up (token 0) comes out.
    const stream = choice({ minTokens: 2 });
    const first = stream.step(wants(EOS));
    expect(first.token.tokenId).not.toBe(EOS);
    expect(first.finish).toBeNull();
    const ignoring = choice({ ignoreEos: true, maxTokens: 3 });
    const steps = run(ignoring, [EOS, EOS, EOS]);
    expect(steps.map((s) => s.token.tokenId)).toEqual([EOS, EOS, EOS]);
    expect(ignoring.finish).toEqual({ finishReason: "length", stopReason: null });
  });

  it("stops on repetition", () => {
    const stream = choice({ repetitionDetection: { maxPatternSize: 2, minPatternSize: 1, minCount: 3 } });
    const ab = tokenizer.encode("ab");
    run(stream, [65, ...ab, ...ab, ...ab, ...ab]);
    expect(stream.sequence.outputTokenIds).toEqual([65, ...ab, ...ab, ...ab]);
    expect(stream.finish).toEqual({ finishReason: "repetition", stopReason: "repetition_detected" });
  });

  it("bans bad_words, tokenizing them itself", () => {
    // The model wants "hello" (one token); banned, its runner-up (token 0) comes out instead.
    const stream = choice({ badWords: ["hello"] });
    expect(stream.step(wants(tokenizer.tokenId("hello")!)).token.tokenId).toBe(0);
  });

  it("releases held-back text when aborted", () => {
    const stream = choice({ stop: ["zzzz"] });
    const steps = run(stream, tokenizer.encode("abcdef"));
    expect(steps.map((s) => s.text).join("")).toBe("abc");
    expect(stream.abort()).toEqual({ text: "def", finish: { finishReason: "abort", stopReason: null } });
  });

  it("reports the sampled token's raw logprob and top alternatives on every step", () => {
    const steps = run(choice({ logprobs: 2 }), tokenizer.encode("a"));
    const [step] = steps;
    expect(step!.token.top).toHaveLength(2);
    expect(step!.token.top![0]!.tokenId).toBe(step!.token.tokenId);
    expect(step!.token.logprob).toBeCloseTo(-(tokenizer.vocabSize - 1) * Math.exp(-20), 6);
  });

  it("creates the n choices of a request, each with its own seeded stream", () => {
    const choices = ChoiceStream.forRequest({
      params: defaultSamplingParams({ n: 3, seed: 40, temperature: 1, maxTokens: 8 }),
      promptTokenIds: [1],
      eosTokenId: EOS,
      tokenizer,
      sampler,
    });
    const flat = new Float32Array(tokenizer.vocabSize);
    const outputs = choices.map((choice) => {
      while (!choice.finish) choice.step(flat);
      return choice.sequence.outputTokenIds;
    });
    expect(outputs).toHaveLength(3);
    expect(new Set(outputs.map((o) => o.join(","))).size).toBe(3);
    // Choice 2 of seed 40 is choice 0 of seed 42.
    const [again] = ChoiceStream.forRequest({ params: defaultSamplingParams({ n: 1, seed: 42, temperature: 1, maxTokens: 8 }), promptTokenIds: [1], eosTokenId: EOS, tokenizer, sampler });
    while (!again!.finish) again!.step(flat);
    expect(again!.sequence.outputTokenIds).toEqual(outputs[2]);
  });
});
