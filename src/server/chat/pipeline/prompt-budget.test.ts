import { describe, expect, it } from "vitest";
import { apiErrorOf } from "../../../testing/chat.js";
import { type PromptBudgetInput, resolvePromptBudget } from "./prompt-budget.js";

const tokens = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

function budget(fields: Partial<PromptBudgetInput> & { prompt?: number }) {
  const { prompt = 10, ...rest } = fields;
  return resolvePromptBudget({
    promptTokenIds: tokens(prompt),
    maxModelLen: 100,
    requested: null,
    requestedParam: "max_completion_tokens",
    truncatePromptTokens: null,
    generationMaxTokens: null,
    ...rest,
  });
}

describe("prompt budget", () => {
  it("gives everything left in the context when nothing is requested", () => {
    expect(budget({}).maxTokens).toBe(90);
    expect(budget({ generationMaxTokens: 50 }).maxTokens).toBe(50);
    expect(budget({ requested: 20, generationMaxTokens: 50 }).maxTokens).toBe(20);
    expect(budget({ requested: 60, generationMaxTokens: 50 }).maxTokens).toBe(60);
  });

  it("passes non-positive requests through for the max_tokens rule", () => {
    expect(budget({ requested: 0 }).maxTokens).toBe(0);
    expect(budget({ requested: -3 }).maxTokens).toBe(-3);
  });

  it("refuses requests beyond the context with vLLM's texts", () => {
    expect(apiErrorOf(() => budget({ requested: 101 }))).toMatchObject({
      status: 400,
      param: "max_completion_tokens",
      message: "max_completion_tokens=101 cannot be greater than max_model_len=100. Please request fewer output tokens. (parameter=max_completion_tokens, value=101)",
    });
    expect(apiErrorOf(() => budget({ requested: 101, requestedParam: "max_tokens" })).message).toMatch(/^max_tokens=101 cannot be greater than max_model_len=100/);
    expect(apiErrorOf(() => budget({ requested: 95 }))).toMatchObject({
      param: "input_tokens",
      message:
        "This model's maximum context length is 100 tokens. However, you requested 95 output tokens and your prompt contains 10 input tokens, for a total of 105 tokens. " +
        "Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=10)",
    });
  });

  it("refuses prompts that leave no room", () => {
    expect(apiErrorOf(() => budget({ prompt: 100 })).message).toMatch(/^The decoder prompt \(length 100\) plus the number of requested output tokens \(at least 1\) is longer than the maximum model length of 100\./);
    expect(apiErrorOf(() => budget({ prompt: 101 })).message).toMatch(/^The decoder prompt \(length 101\) is longer than the maximum model length of 100\./);
    expect(apiErrorOf(() => budget({ prompt: 0 })).message).toBe("The decoder prompt cannot be empty");
  });

  it("truncates on the left and budgets from the truncated length", () => {
    const kept = budget({ prompt: 10, truncatePromptTokens: 4 });
    expect(kept.promptTokenIds).toEqual([7, 8, 9, 10]);
    expect(kept.maxTokens).toBe(96);
    expect(budget({ prompt: 10, truncatePromptTokens: 40 }).promptTokenIds).toHaveLength(10);
    const fit = budget({ prompt: 150, truncatePromptTokens: -1, requested: 30 });
    expect(fit.promptTokenIds).toHaveLength(70);
    expect(fit.promptTokenIds[0]).toBe(81);
    expect(fit.maxTokens).toBe(30);
    expect(apiErrorOf(() => budget({ truncatePromptTokens: 80, requested: 30 }))).toMatchObject({
      param: "truncate_prompt_tokens",
      message: expect.stringMatching(/^truncate_prompt_tokens=80 cannot be greater than max_model_len - max_completion_tokens = 70\. Please request a smaller truncation size\./),
    });
    expect(apiErrorOf(() => budget({ truncatePromptTokens: 0 })).message).toBe("The decoder prompt cannot be empty");
  });
});
