import { describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens, testPlan } from "../../../testing/chat.js";
import type { CompletionPlan } from "../pipeline/completion-plan.js";
import { LogprobFormatter } from "../pipeline/logprobs.js";
import { tokenMetadataOf } from "../pipeline/token-metadata.js";
import { collectCompletion } from "../completions/response.js";
import { streamCompletion } from "../completions/stream.js";
import { MessagesRes, type MessagesResponse, MessagesStreamEvent } from "./protocol.js";
import { anthropicMessage } from "./response.js";
import { AnthropicEventStream } from "./stream.js";

const tokenizer = new ByteTokenizer();
const started: GenerateEvent = { type: "started", promptTokenIds: [1, 2, 3], cachedTokens: 0, promptLogprobs: null };
const output = (text: string): GenerateEvent => ({ type: "output", index: 0, tokens: sampledTokens(tokenizer, text), text });
const finished = (finishReason: "stop" | "length", stopReason: string | null = null): GenerateEvent => ({ type: "finished", index: 0, finishReason, stopReason });
const stopSequences = ["END"];

const reasoningAndTools = testPlan(tokenizer, { output: { ...testPlan(tokenizer).output, reasoning: "undecided", toolChoice: { kind: "auto" } } });
const cases: [string, string[], GenerateEvent, CompletionPlan, MessagesResponse["stop_reason"]][] = [
  ["plain text", ["Hel", "lo"], finished("stop"), testPlan(tokenizer), "end_turn"],
  ["a stop sequence", ["Hel"], finished("stop", "END"), testPlan(tokenizer), "stop_sequence"],
  ["thinking, text and a tool call", ["<think>a</think>", "Sure.", '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'], finished("stop"), reasoningAndTools, "tool_use"],
  ["a cut-off answer", ["Hel"], finished("length"), testPlan(tokenizer), "max_tokens"],
];

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/**
 * The Messages surface's values are exactly what its protocol (the schemas /openapi.json shows)
 * describes: parsing drops fields a schema does not name, so equality also finds undocumented ones.
 */
describe("the Messages API's answers and its protocol", () => {
  it.each(cases)("a whole message: %s", async (_name, texts, finish, plan, stopReason) => {
    const completion = await collectCompletion(eventStream([started, ...texts.map(output), finish]), plan);
    const message = wire(anthropicMessage(completion, "msg_test", stopSequences));
    expect(MessagesRes.parse(message)).toEqual(message);
    expect(message.stop_reason).toBe(stopReason);
  });

  it("a whole message with the token metadata", async () => {
    const plan = testPlan(tokenizer, { logprobs: true, returnTokenIds: true, formatter: new LogprobFormatter(tokenizer, { asTokenIds: true, topCount: 0 }) });
    const completion = await collectCompletion(eventStream([started, output("ok"), finished("stop")]), plan);
    const message: MessagesResponse = wire({ ...anthropicMessage(completion, "msg_test", stopSequences), ...tokenMetadataOf(completion) });
    expect(MessagesRes.parse(message)).toEqual(message);
    expect(message).toMatchObject({ prompt_token_ids: [1, 2, 3], token_ids: tokenizer.encode("ok") });
  });

  it.each(cases)("every streamed event: %s", async (_name, texts, finish, plan, stopReason) => {
    const events: MessagesStreamEvent[] = [];
    const out = new AnthropicEventStream(
      async (event) => {
        events.push(wire(event));
      },
      { id: "msg_test", model: "test/base", stopSequences },
    );
    await streamCompletion(eventStream([started, ...texts.map(output), finish]), { ...plan, streamUsage: { include: true, continuous: true } }, (chunk) => out.push(chunk));
    await out.finish();
    for (const event of events) expect(MessagesStreamEvent.parse(event)).toEqual(event);
    expect(events.map((event) => event.type).slice(0, 2)).toEqual(["message_start", "ping"]);
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: stopReason } });
    expect(events.at(-1)!.type).toBe("message_stop");
  });
});
