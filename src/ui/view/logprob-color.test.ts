import { describe, expect, it } from "vitest";
import { describeLogprob, describeTokenLogprobs, logprobColor } from "./logprob-color.js";

describe("logprob colours", () => {
  it("goes from red (unlikely) to green (certain)", () => {
    expect(logprobColor(0)).toBe("hsl(120, 70%, 80%)");
    expect(logprobColor(Math.log(0.5))).toBe("hsl(60, 70%, 80%)");
    expect(logprobColor(-50)).toBe("hsl(0, 70%, 80%)");
    expect(logprobColor(NaN)).toBe("hsl(0, 0%, 85%)");
  });

  it("describes a token for its tooltip", () => {
    expect(describeLogprob(Math.log(0.25))).toBe("logprob -1.3863 · p 0.2500");
  });

  it("adds the trainer's logprob and the difference when the trainer scored the token", () => {
    expect(describeTokenLogprobs(-0.5, undefined)).toBe("sampler logprob -0.5000 · p 0.6065");
    expect(describeTokenLogprobs(-0.5, -0.25)).toBe("sampler logprob -0.5000 · p 0.6065\ntrainer logprob -0.2500 · difference 0.2500");
    expect(describeTokenLogprobs(-0.5, null)).toBe("sampler logprob -0.5000 · p 0.6065\ntrainer: not scored");
    expect(describeTokenLogprobs(NaN, -1)).toBe("sampler no logprob\ntrainer logprob -1.0000");
  });
});
