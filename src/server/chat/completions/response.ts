import type { FinishReason, GenerateEvent, PromptPositionLogprobs, SampledToken } from "../../../engine/api.js";
import { finalMessage } from "../parsers/choice-output.js";
import { type CompletionPlan, usage } from "../pipeline/completion-plan.js";
import type { ChatCompletionResponse } from "./protocol.js";

/**
 * The non-streaming response (`docs/api/chat.md#response`, `docs/api/chat.md#response`): the engine's events
 * are collected per choice, then each choice's text becomes its message.
 */

export interface ChoiceState {
  tokens: SampledToken[];
  text: string;
  finishReason: FinishReason | null;
  stopReason: number | string | null;
}

export interface Started {
  promptTokenIds: number[];
  cachedTokens: number;
  promptLogprobs: (PromptPositionLogprobs | null)[] | null;
}

/** Thrown when the engine's event stream ends without ever starting: an engine fault, answered with a 500. */
export class EngineOutputError extends Error {}

/** The engine's events of one generation, gathered per choice; what every surface builds its whole response from. */
export interface CollectedGeneration {
  started: Started;
  choices: ChoiceState[];
}

export async function collectGeneration(events: AsyncIterable<GenerateEvent>, n: number): Promise<CollectedGeneration> {
  const choices: ChoiceState[] = Array.from({ length: n }, () => ({ tokens: [], text: "", finishReason: null, stopReason: null }));
  let started: Started | null = null;
  for await (const event of events) {
    if (event.type === "started") started = event;
    else if (event.type === "output") {
      const choice = choices[event.index];
      if (!choice) throw new EngineOutputError(`engine produced output for choice ${event.index} of ${n}`);
      choice.tokens.push(...event.tokens);
      choice.text += event.text;
    } else {
      const choice = choices[event.index];
      if (!choice) throw new EngineOutputError(`engine finished choice ${event.index} of ${n}`);
      choice.finishReason = event.finishReason;
      choice.stopReason = event.stopReason;
    }
  }
  if (!started) throw new EngineOutputError("No output received from the engine.");
  return { started, choices };
}

export async function collectCompletion(events: AsyncIterable<GenerateEvent>, plan: CompletionPlan): Promise<ChatCompletionResponse> {
  const { started, choices } = await collectGeneration(events, plan.n);
  return buildResponse(plan, started, choices);
}

function buildResponse(plan: CompletionPlan, started: Started, choices: ChoiceState[]): ChatCompletionResponse {
  const showMetadata = !plan.hideTokenMetadata;
  const outChoices = choices.map((choice, index) => {
    const message = finalMessage(choice.text, choice.finishReason ?? "abort", plan.output);
    const content = plan.echo !== null ? plan.echo + (message.content ?? "") : message.content;
    return {
      index,
      message: {
        role: plan.role,
        content,
        refusal: null,
        annotations: null,
        audio: null,
        function_call: null,
        ...(message.toolCalls.length > 0 ? { tool_calls: message.toolCalls } : {}),
        reasoning: message.reasoning,
      },
      logprobs: plan.logprobs && showMetadata ? { content: plan.formatter.entries(choice.tokens) } : null,
      finish_reason: message.finishReason,
      stop_reason: choice.stopReason,
      token_ids: plan.returnTokenIds && showMetadata ? choice.tokens.map((token) => token.tokenId) : null,
    };
  });
  const completionTokens = choices.reduce((sum, choice) => sum + choice.tokens.length, 0);
  return {
    id: plan.id,
    object: "chat.completion",
    created: plan.created,
    model: plan.model,
    choices: outChoices,
    service_tier: null,
    system_fingerprint: plan.systemFingerprint,
    usage: usage(started.promptTokenIds.length, completionTokens, started.cachedTokens),
    prompt_logprobs: plan.promptLogprobs && started.promptLogprobs ? plan.formatter.promptLogprobs(started.promptLogprobs) : null,
    prompt_token_ids: plan.returnTokenIds ? started.promptTokenIds : null,
    kv_transfer_params: null,
  };
}
