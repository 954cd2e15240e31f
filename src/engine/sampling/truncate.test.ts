import { describe, expect, it } from "vitest";
import { truncatePrompt } from "./truncate.js";

describe("truncatePrompt", () => {
  const prompt = [1, 2, 3, 4, 5];

  it("keeps the last k tokens", () => {
    expect(truncatePrompt(prompt, 2, 100)).toEqual([4, 5]);
    expect(truncatePrompt(prompt, 5, 100)).toEqual(prompt);
    expect(truncatePrompt(prompt, 9, 100)).toEqual(prompt);
    expect(truncatePrompt(prompt, 0, 100)).toEqual([]);
  });

  it("keeps as many as fit for -1, and everything for null", () => {
    expect(truncatePrompt(prompt, -1, 3)).toEqual([3, 4, 5]);
    expect(truncatePrompt(prompt, -1, 10)).toEqual(prompt);
    expect(truncatePrompt(prompt, null, 1)).toEqual(prompt);
  });

  it("rejects values below -1", () => {
    expect(() => truncatePrompt(prompt, -2, 3)).toThrow(RangeError);
  });
});
