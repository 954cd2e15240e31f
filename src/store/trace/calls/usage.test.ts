import { describe, expect, it } from "vitest";
import { ownUsage, usageWithDescendants } from "./usage.js";

const usage = (tokens: Record<string, number>) => ({ usage: { m: tokens } });

describe("usage roll-ups", () => {
  it("folds OpenAI and Anthropic token names and derives total tokens", () => {
    expect(ownUsage({ usage: { m: { prompt_tokens: 2, input_tokens: 3, completion_tokens: 1, output_tokens: 4 } } }, false).m).toMatchObject({ prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
    expect(ownUsage({ usage: { m: { total_tokens: 9, prompt_tokens: 1 } } }, false).m!.total_tokens).toBe(9);
    expect(ownUsage({ usage: { m: {}, n: "bad" } }, false)).toEqual({});
    expect(ownUsage({ usage: { m: {} }, weave: { costs: { m: { prompt_tokens_total_cost: 0.5 } } } }, true).m!.prompt_tokens_total_cost).toBe(0.5);
  });

  it("adds descendants bottom-up, ignores parents outside the set, and survives cycles", () => {
    const calls = [
      { id: "a", parent_id: null, summary: usage({ prompt_tokens: 1 }) },
      { id: "b", parent_id: "a", summary: usage({ prompt_tokens: 10 }) },
      { id: "c", parent_id: "b", summary: usage({ prompt_tokens: 100 }) },
      { id: "d", parent_id: "outside", summary: usage({ prompt_tokens: 1000 }) },
      { id: "x", parent_id: "y", summary: usage({ prompt_tokens: 1 }) },
      { id: "y", parent_id: "x", summary: usage({ prompt_tokens: 1 }) },
    ];
    const rolled = usageWithDescendants(calls, false);
    expect(rolled.a!.m!.prompt_tokens).toBe(111);
    expect(rolled.b!.m!.prompt_tokens).toBe(110);
    expect(rolled.c!.m!.prompt_tokens).toBe(100);
    expect(rolled.d!.m!.prompt_tokens).toBe(1000);
    expect(rolled.x!.m!.prompt_tokens).toBe(1);
  });

  it("rolls up a deep chain without recursion", () => {
    const calls = Array.from({ length: 20_000 }, (_, i) => ({ id: `c${i}`, parent_id: i === 0 ? null : `c${i - 1}`, summary: usage({ completion_tokens: 1 }) }));
    expect(usageWithDescendants(calls, false).c0!.m!.completion_tokens).toBe(20_000);
  });
});
