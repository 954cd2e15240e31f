import { describe, expect, it } from "vitest";
import { defaultSamplingParams } from "../../../engine/sampling/params.js";
import { apiErrorOf, chatRequest } from "../../../testing/chat.js";
import { buildSamplingParams, type SamplingContext } from "./sampling.js";

function params(fields: Record<string, unknown> = {}, ctx: Partial<SamplingContext> = {}) {
  return buildSamplingParams(chatRequest(fields), {
    info: { vocabSize: 300, generationDefaults: {} },
    tokenizerVocabSize: 290,
    maxTokens: 50,
    logprobs: Boolean(fields.logprobs),
    ...ctx,
  });
}

const error = (fields: Record<string, unknown>, ctx: Partial<SamplingContext> = {}) => apiErrorOf(() => params(fields, ctx));

describe("sampling parameters", () => {
  it("resolves neutral defaults when neither the request nor the model sets them", () => {
    expect(params()).toEqual(defaultSamplingParams({ maxTokens: 50 }));
  });

  it("prefers the request, then generation_config, then neutral, and respects temperature 0", () => {
    const generationDefaults = { temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0.05, repetition_penalty: 1.1 };
    expect(params({}, { info: { vocabSize: 300, generationDefaults } })).toMatchObject({ temperature: 0.6, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 });
    expect(params({ top_p: 0.5, temperature: 0.9 }, { info: { vocabSize: 300, generationDefaults } })).toMatchObject({ temperature: 0.9, topP: 0.5, topK: 20 });
    // Greedy resets the filters, whatever generation_config says.
    expect(params({ temperature: 0 }, { info: { vocabSize: 300, generationDefaults } })).toMatchObject({ temperature: 0, topP: 1, topK: 0, minP: 0 });
  });

  it("maps the remaining fields", () => {
    const built = params({
      n: 3,
      seed: 9,
      stop: "END",
      stop_token_ids: [5, 5, 6],
      min_tokens: 2,
      ignore_eos: true,
      include_stop_str_in_output: true,
      skip_special_tokens: false,
      spaces_between_special_tokens: false,
      bad_words: ["bad"],
      use_beam_search: true,
      length_penalty: 0.5,
      truncate_prompt_tokens: 8,
      repetition_detection: { max_pattern_size: 3, min_count: 2 },
      allowed_token_ids: [1, 2, 2],
    });
    expect(built).toMatchObject({
      n: 3,
      seed: 9,
      stop: ["END"],
      stopTokenIds: [5, 6],
      minTokens: 2,
      ignoreEos: true,
      includeStopStrInOutput: true,
      skipSpecialTokens: false,
      spacesBetweenSpecialTokens: false,
      badWords: ["bad"],
      useBeamSearch: true,
      lengthPenalty: 0.5,
      truncatePromptTokens: 8,
      repetitionDetection: { maxPatternSize: 3, minPatternSize: 0, minCount: 2 },
      allowedTokenIds: [1, 2],
    });
    expect(params({ seed: -1 }).seed).toBeNull();
    expect(params({ repetition_detection: { max_pattern_size: 0 } }).repetitionDetection).toBeNull();
    expect(params({ temperature: 0.001 }).temperature).toBe(0.01);
  });

  it("clamps logit_bias and checks its keys and vocabulary", () => {
    expect([...params({ logit_bias: { "5": 150, " 7 ": -300, "9": 1.5 } }).logitBias!].sort((a, b) => a[0] - b[0])).toEqual([
      [5, 100],
      [7, -100],
      [9, 1.5],
    ]);
    expect(error({ logit_bias: { abc: 1, "2": 1, "1.5": 2 } })).toEqual({
      status: 400,
      type: "BadRequestError",
      param: "logit_bias",
      message: "logit_bias contains key(s) that cannot be converted to integer token IDs: ['abc', '1.5'] (parameter=logit_bias, value=['abc', '1.5'])",
    });
    expect(error({ logit_bias: { "300": 1, "-1": 1, "299": 1 } })).toMatchObject({
      param: "logit_bias",
      message: "token_id(s) [300, -1] in logit_bias contain out-of-vocab token ids. Vocabulary size: 300 (parameter=logit_bias, value=[300, -1])",
    });
  });

  it("checks allowed_token_ids against the tokenizer", () => {
    expect(error({ allowed_token_ids: [] })).toMatchObject({ param: "allowed_token_ids", message: "allowed_token_ids is not None and empty! (parameter=allowed_token_ids, value=[])" });
    expect(error({ allowed_token_ids: [1, 290] }).message).toBe("allowed_token_ids contains out-of-vocab token id! (parameter=allowed_token_ids, value=[290])");
  });

  it("maps logprobs, top_logprobs and prompt_logprobs, capped at 20", () => {
    expect(params({ logprobs: false, top_logprobs: 0 }).logprobs).toBeNull();
    expect(params({ logprobs: true }).logprobs).toBe(0);
    expect(params({ logprobs: true, top_logprobs: 5 }).logprobs).toBe(5);
    expect(params({ top_logprobs: 2 }, { logprobs: true }).logprobs).toBe(2);
    expect(error({ logprobs: true, top_logprobs: 21 })).toMatchObject({ param: "logprobs", message: "Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)" });
    expect(error({ logprobs: true, top_logprobs: -1 }).message).toMatch(/^Requested sample logprobs of 300, which is greater than max allowed: 20/);
    expect(params({ prompt_logprobs: 3 }).promptLogprobs).toBe(3);
    expect(params({ echo: true }).promptLogprobs).toBe(0);
    expect(params({ echo: true, logprobs: true, top_logprobs: 4 }).promptLogprobs).toBe(4);
    expect(error({ prompt_logprobs: 25 })).toMatchObject({ param: "prompt_logprobs", message: expect.stringMatching(/^Requested prompt logprobs of 25, which is greater than max allowed: 20/) });
  });

  it("applies vLLM's SamplingParams checks with its texts", () => {
    const cases: [Record<string, unknown>, string, string | null][] = [
      [{ n: 0 }, "n must be at least 1, got 0.", null],
      [{ n: 129, temperature: 1 }, "n must be at most 128, got 129.", null],
      [{ presence_penalty: 3 }, "presence_penalty must be in [-2, 2], got 3.0.", null],
      [{ frequency_penalty: -2.5 }, "frequency_penalty must be in [-2, 2], got -2.5.", null],
      [{ repetition_penalty: 0 }, "repetition_penalty must be greater than zero, got 0.0.", null],
      [{ repetition_penalty: "inf" }, "repetition_penalty must be a finite number, got inf.", null],
      [{ temperature: "nan" }, "temperature must be a finite number, got nan. (parameter=temperature, value=nan)", "temperature"],
      [{ temperature: -0.5 }, "temperature must be non-negative, got -0.5. (parameter=temperature, value=-0.5)", "temperature"],
      [{ temperature: 3 }, "temperature must be in [0, 2], got 3.0. (parameter=temperature, value=3.0)", "temperature"],
      [{ top_p: 1.5 }, "top_p must be in (0, 1], got 1.5. (parameter=top_p, value=1.5)", "top_p"],
      [{ top_p: 0 }, "top_p must be in (0, 1], got 0.0. (parameter=top_p, value=0.0)", "top_p"],
      [{ top_k: -2 }, "top_k must be 0 (disable), or at least 1, got -2.", null],
      [{ min_p: 1.5 }, "min_p must be in [0, 1], got 1.5.", null],
      [{ min_tokens: -1 }, "min_tokens must be greater than or equal to 0, got -1.", null],
      [{ min_tokens: 51 }, "min_tokens must be less than or equal to max_tokens=50, got 51.", null],
      [{ stop: ["a", ""] }, "stop cannot contain an empty string.", null],
      [{ bad_words: ["ok", ""] }, "bad_words cannot contain an empty string. Got bad_words=['ok', '']", null],
      [{ n: 2, temperature: 0 }, "n must be 1 when using greedy sampling, got 2.", null],
    ];
    for (const [fields, message, param] of cases) {
      expect(error(fields), JSON.stringify(fields)).toEqual({ status: 400, type: "BadRequestError", message, param });
    }
    expect(error({}, { maxTokens: 0 })).toMatchObject({ param: "max_tokens", message: "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)" });
    // Beam search may be greedy with n > 1; top_k -1 disables.
    expect(params({ n: 2, temperature: 0, use_beam_search: true }).n).toBe(2);
    expect(params({ top_k: -1 }).topK).toBe(-1);
  });
});
