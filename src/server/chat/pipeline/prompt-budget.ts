import { chatRuleError } from "../common/chat-errors.js";

/**
 * Prompt truncation and the effective output budget (`docs/api/chat.md#max-tokens`, `truncate_prompt_tokens`
 * in docs/api/chat.md#sampling-fields), with vLLM's length errors. Runs on the tokenized prompt before any
 * header is sent.
 */
export interface PromptBudgetInput {
  promptTokenIds: number[];
  maxModelLen: number;
  /** `max_completion_tokens ?? max_tokens`, null when neither was sent. */
  requested: number | null;
  /** Which of the two fields `requested` came from, for the messages. */
  requestedParam: "max_completion_tokens" | "max_tokens";
  truncatePromptTokens: number | null;
  /** `max_new_tokens` of the model's generation_config.json, used only when nothing was requested. */
  generationMaxTokens: number | null;
}

export interface PromptBudget {
  /** The prompt as it will run (the last k tokens when truncated). */
  promptTokenIds: number[];
  /** The effective max_tokens; may be < 1, which the sampling rules reject with vLLM's text. */
  maxTokens: number;
}

export function resolvePromptBudget(input: PromptBudgetInput): PromptBudget {
  const { maxModelLen: maxLen, requested, requestedParam } = input;
  if (requested !== null && requested > maxLen) {
    throw chatRuleError(`${requestedParam}=${requested} cannot be greater than max_model_len=${maxLen}. Please request fewer output tokens.`, {
      param: requestedParam,
      value: requested,
    });
  }
  const maxInput = maxLen - Math.max(requested ?? 0, 0);
  const prompt = truncate(input.promptTokenIds, input.truncatePromptTokens, maxInput, requestedParam);
  const length = prompt.length;
  if (length === 0) throw chatRuleError("The decoder prompt cannot be empty", { param: "input_tokens" });

  if (requested !== null && length > maxInput) {
    const output = Math.max(requested, 0);
    throw chatRuleError(
      `This model's maximum context length is ${maxLen} tokens. However, you requested ${output} output tokens and your prompt contains ${length} input tokens, ` +
        `for a total of ${length + output} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
      { param: "input_tokens", value: length },
    );
  }
  if (length > maxLen) {
    throw chatRuleError(`The decoder prompt (length ${length}) is longer than the maximum model length of ${maxLen}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`, {
      param: "input_tokens",
      value: length,
    });
  }
  if (requested === null && length === maxLen) {
    throw chatRuleError(
      `The decoder prompt (length ${length}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${maxLen}. ` +
        "Make sure that `max_model_len` is no smaller than the number of text tokens (prompt + requested output tokens).",
      { param: "input_tokens", value: length },
    );
  }
  const budget = requested ?? input.generationMaxTokens ?? Infinity;
  return { promptTokenIds: prompt, maxTokens: Math.min(maxLen - length, budget) };
}

/** Keeps the last k tokens (vLLM truncates generation prompts on the left); -1 keeps as many as fit. */
function truncate(tokens: number[], truncateTo: number | null, maxInput: number, requestedParam: string): number[] {
  if (truncateTo === null) return tokens;
  if (truncateTo > maxInput) {
    throw chatRuleError(`truncate_prompt_tokens=${truncateTo} cannot be greater than max_model_len - ${requestedParam} = ${maxInput}. Please request a smaller truncation size.`, {
      param: "truncate_prompt_tokens",
      value: truncateTo,
    });
  }
  const keep = truncateTo === -1 ? maxInput : truncateTo;
  if (keep >= tokens.length) return tokens;
  return keep === 0 ? [] : tokens.slice(tokens.length - keep);
}
