import { describe, expect, it } from "vitest";
import { describeLogprob, logprobColor } from "./logprob-color.js";

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
});
