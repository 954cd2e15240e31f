import type { GenerateEvent } from "../../../engine/api.js";
import { ChoiceStream, type MessageDelta } from "../parsers/choice-output.js";
import { type CompletionPlan, usage } from "../pipeline/completion-plan.js";
import type { ChatCompletionChunk, ChatCompletionChunkChoice } from "./protocol.js";
import { EngineOutputError } from "./response.js";

/**
 * The streamed response (`docs/api/chat.md#streaming`): per choice a role chunk, the echo, delta chunks and
 * exactly one finish chunk; then the usage chunk when asked for. Chunks carry only the fields that
 * were set ("exclude unset"), with explicit nulls for `logprobs` and `finish_reason`. The caller
 * writes the SSE framing, the error event and `[DONE]`.
 */

export async function streamCompletion(events: AsyncIterable<GenerateEvent>, plan: CompletionPlan, send: (chunk: ChatCompletionChunk) => Promise<void>): Promise<void> {
  const streams = Array.from({ length: plan.n }, () => new ChoiceStream(plan.output));
  const completionTokens: number[] = new Array(plan.n).fill(0);
  const finished: boolean[] = new Array(plan.n).fill(false);
  const showMetadata = !plan.hideTokenMetadata;
  let promptTokens = 0;
  let cachedTokens = 0;
  let started = false;

  const chunk = (choice: ChatCompletionChunkChoice, index: number, extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => ({
    id: plan.id,
    object: "chat.completion.chunk",
    created: plan.created,
    model: plan.model,
    choices: [choice],
    ...extra,
    ...(plan.streamUsage.continuous ? { usage: usage(promptTokens, completionTokens[index]!) } : {}),
  });

  const finish = async (index: number, finishReason: string, stopReason: number | string | null) => {
    const delta: MessageDelta = streams[index]!.finish() ?? {};
    finished[index] = true;
    const choice: ChatCompletionChunkChoice = { index, delta, logprobs: null, finish_reason: finishReason, stop_reason: stopReason };
    if (plan.returnTokenIds && showMetadata) choice.token_ids = [];
    await send(chunk(choice, index, plan.streamUsage.include ? {} : { system_fingerprint: plan.systemFingerprint }));
  };

  for await (const event of events) {
    if (event.type === "started") {
      started = true;
      promptTokens = event.promptTokenIds.length;
      cachedTokens = event.cachedTokens;
      for (let index = 0; index < plan.n; index++) {
        const role = { index, delta: { role: plan.role, content: "" }, logprobs: null, finish_reason: null };
        await send(chunk(role, index, plan.returnTokenIds && index === 0 ? { prompt_token_ids: event.promptTokenIds } : {}));
      }
      if (plan.echo) {
        for (let index = 0; index < plan.n; index++) await send(chunk({ index, delta: { content: plan.echo }, logprobs: null, finish_reason: null }, index));
      }
      continue;
    }
    const index = event.index;
    if (!started || index >= plan.n) throw new EngineOutputError(`engine event for choice ${index} out of order`);
    if (finished[index]) continue;
    if (event.type === "finished") {
      await finish(index, streams[index]!.finishReason(event.finishReason), event.stopReason);
      continue;
    }
    completionTokens[index] += event.tokens.length;
    const logprobs = plan.logprobs && showMetadata && event.tokens.length > 0 ? { content: plan.formatter.entries(event.tokens) } : null;
    const tokenIds = plan.returnTokenIds && showMetadata && event.tokens.length > 0 ? event.tokens.map((token) => token.tokenId) : undefined;
    let delta = streams[index]!.push(event.text);
    // A parser may hold text back; tokens and logprobs still go out, with an empty delta.
    if (delta === null) {
      if (logprobs === null && tokenIds === undefined) continue;
      delta = {};
    }
    const choice: ChatCompletionChunkChoice = { index, delta, logprobs, finish_reason: null };
    if (tokenIds) choice.token_ids = tokenIds;
    await send(chunk(choice, index));
  }
  if (!started) throw new EngineOutputError("No output received from the engine.");
  for (let index = 0; index < plan.n; index++) if (!finished[index]) await finish(index, "abort", null);
  if (plan.streamUsage.include) {
    const total = completionTokens.reduce((sum, count) => sum + count, 0);
    await send({ id: plan.id, object: "chat.completion.chunk", created: plan.created, model: plan.model, choices: [], usage: usage(promptTokens, total, cachedTokens), system_fingerprint: plan.systemFingerprint });
  }
}
