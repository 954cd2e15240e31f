import type { GenerateEvent } from "../../../engine/api.js";
import { usage } from "../pipeline/completion-plan.js";
import { mergeTagged } from "../common/merge-events.js";
import { type ChoiceState, collectGeneration, EngineOutputError, type Started } from "../completions/response.js";
import { appendPrompt, appendSampled, emptyLegacyLogprobs } from "./legacy-logprobs.js";
import type { LegacyPlan } from "./prepare.js";
import type { CompletionChoice, CompletionChunk, CompletionChunkChoice, CompletionResponse, LegacyLogprobs } from "./protocol.js";

/**
 * The `text_completion` response, whole and streamed (vLLM's shapes): one generation per prompt,
 * choice `i` of prompt `p` at index `p * n + i`; `echo` puts the prompt's text (and, with logprobs,
 * its tokens) before the generated ones.
 */

export async function collectLegacyCompletion(generations: AsyncIterable<GenerateEvent>[], plan: LegacyPlan): Promise<CompletionResponse> {
  const gathered = await Promise.all(generations.map((events) => collectGeneration(events, plan.n)));
  const choices = gathered.flatMap(({ started, choices: states }, prompt) => states.map((state, index) => wholeChoice(plan, prompt, started, state, prompt * plan.n + index)));
  const promptTokens = gathered.reduce((sum, { started }) => sum + started.promptTokenIds.length, 0);
  const completionTokens = gathered.reduce((sum, { choices: states }) => sum + states.reduce((inner, state) => inner + state.tokens.length, 0), 0);
  const cachedTokens = gathered.reduce((sum, { started }) => sum + started.cachedTokens, 0);
  return {
    id: plan.id,
    object: "text_completion",
    created: plan.created,
    model: plan.model,
    choices,
    service_tier: null,
    system_fingerprint: plan.systemFingerprint,
    usage: usage(promptTokens, completionTokens, cachedTokens),
    kv_transfer_params: null,
  };
}

function wholeChoice(plan: LegacyPlan, prompt: number, started: Started, state: ChoiceState, index: number): CompletionChoice {
  const promptText = plan.echo ? plan.prompts[prompt]!.text : "";
  let logprobs: LegacyLogprobs | null = null;
  if (plan.logprobs !== null) {
    logprobs = emptyLegacyLogprobs();
    if (plan.echo) appendPrompt(logprobs, plan.formatter, started.promptTokenIds, started.promptLogprobs, plan.logprobs);
    appendSampled(logprobs, plan.formatter, state.tokens, promptText.length);
  }
  const outputIds = state.tokens.map((token) => token.tokenId);
  return {
    index,
    text: promptText + state.text,
    logprobs,
    finish_reason: state.finishReason ?? "abort",
    stop_reason: state.stopReason,
    token_ids: plan.returnTokenIds ? (plan.echo ? [...started.promptTokenIds, ...outputIds] : outputIds) : null,
    prompt_logprobs: plan.promptLogprobs && started.promptLogprobs ? plan.formatter.promptLogprobs(started.promptLogprobs) : null,
    prompt_token_ids: plan.returnTokenIds ? started.promptTokenIds : null,
  };
}

/** The streamed response: per choice the echo (if asked), text chunks, one finish chunk; then the usage chunk when asked for. */
export async function streamLegacyCompletion(generations: AsyncIterable<GenerateEvent>[], plan: LegacyPlan, send: (chunk: CompletionChunk) => Promise<void>): Promise<void> {
  const total = plan.prompts.length * plan.n;
  const offsets: number[] = new Array(total).fill(0);
  const completionTokens: number[] = new Array(total).fill(0);
  const finished: boolean[] = new Array(total).fill(false);
  const promptTokens: number[] = new Array(plan.prompts.length).fill(0);
  let cachedTokens = 0;
  let startedCount = 0;

  const chunk = (choice: CompletionChunkChoice, prompt: number, index: number): CompletionChunk => ({
    id: plan.id,
    object: "text_completion",
    created: plan.created,
    model: plan.model,
    choices: [choice],
    ...(plan.streamUsage.continuous ? { usage: usage(promptTokens[prompt]!, completionTokens[index]!) } : {}),
  });

  for await (const { source: prompt, value: event } of mergeTagged(generations)) {
    if (event.type === "started") {
      startedCount++;
      promptTokens[prompt] = event.promptTokenIds.length;
      cachedTokens += event.cachedTokens;
      if (!plan.echo) continue;
      const text = plan.prompts[prompt]!.text;
      for (let choice = 0; choice < plan.n; choice++) {
        const index = prompt * plan.n + choice;
        let logprobs: LegacyLogprobs | null = null;
        if (plan.logprobs !== null) {
          logprobs = emptyLegacyLogprobs();
          appendPrompt(logprobs, plan.formatter, event.promptTokenIds, event.promptLogprobs, plan.logprobs);
        }
        offsets[index] = text.length;
        const echo: CompletionChunkChoice = { index, text, logprobs, finish_reason: null, stop_reason: null };
        if (plan.returnTokenIds) echo.token_ids = event.promptTokenIds;
        await send(chunk(echo, prompt, index));
      }
      continue;
    }
    const index = prompt * plan.n + event.index;
    if (event.index >= plan.n) throw new EngineOutputError(`engine event for choice ${event.index} of ${plan.n}`);
    if (finished[index]) continue;
    if (event.type === "finished") {
      finished[index] = true;
      await send(chunk({ index, text: "", logprobs: null, finish_reason: event.finishReason, stop_reason: event.stopReason }, prompt, index));
      continue;
    }
    completionTokens[index] += event.tokens.length;
    let logprobs: LegacyLogprobs | null = null;
    if (plan.logprobs !== null && event.tokens.length > 0) {
      logprobs = emptyLegacyLogprobs();
      appendSampled(logprobs, plan.formatter, event.tokens, offsets[index]!);
    }
    offsets[index] = offsets[index]! + event.text.length;
    if (event.text === "" && logprobs === null) continue;
    const out: CompletionChunkChoice = { index, text: event.text, logprobs, finish_reason: null, stop_reason: null };
    if (plan.returnTokenIds) out.token_ids = event.tokens.map((token) => token.tokenId);
    await send(chunk(out, prompt, index));
  }
  if (startedCount < plan.prompts.length) throw new EngineOutputError("No output received from the engine.");
  for (let index = 0; index < total; index++) {
    if (!finished[index]) await send(chunk({ index, text: "", logprobs: null, finish_reason: "abort", stop_reason: null }, Math.floor(index / plan.n), index));
  }
  if (plan.streamUsage.include) {
    const prompt = promptTokens.reduce((sum, count) => sum + count, 0);
    const completion = completionTokens.reduce((sum, count) => sum + count, 0);
    await send({ id: plan.id, object: "text_completion", created: plan.created, model: plan.model, choices: [], usage: usage(prompt, completion, cachedTokens) });
  }
}
