import { describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens, testPlan } from "../../../testing/chat.js";
import { parseInput } from "../../validation.js";
import type { CompletionPlan } from "../pipeline/completion-plan.js";
import { LogprobFormatter } from "../pipeline/logprobs.js";
import { tokenMetadataOf } from "../pipeline/token-metadata.js";
import { collectCompletion } from "../completions/response.js";
import { streamCompletion } from "../completions/stream.js";
import { ResponsesReq, ResponsesRes, type ResponsesResponse, ResponsesStreamEvent } from "./protocol.js";
import { chatResultOf, outputItems, responseObject } from "./response.js";
import { ResponsesEventStream } from "./stream.js";

const tokenizer = new ByteTokenizer();
const started: GenerateEvent = { type: "started", promptTokenIds: [1, 2, 3], cachedTokens: 1, promptLogprobs: null };
const output = (text: string): GenerateEvent => ({ type: "output", index: 0, tokens: sampledTokens(tokenizer, text), text });
const finished = (finishReason: "stop" | "length"): GenerateEvent => ({ type: "finished", index: 0, finishReason, stopReason: null });
const meta = { id: "resp_test", createdAt: 1700000000, model: "test/base" };
const request = parseInput(
  ResponsesReq,
  { model: "test/base", input: "hi", instructions: "Be brief.", tools: [{ type: "function", name: "f", parameters: { type: "object" } }], text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } } },
  "body",
);

const reasoningAndTools = testPlan(tokenizer, { output: { ...testPlan(tokenizer).output, reasoning: "undecided", toolChoice: { kind: "auto" } } });
const cases: [string, string[], "stop" | "length", CompletionPlan][] = [
  ["plain text", ["Hel", "lo"], "stop", testPlan(tokenizer)],
  ["reasoning, text and a tool call", ["<think>a</think>", "Sure.", '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'], "stop", reasoningAndTools],
  ["a cut-off answer", ["Hel"], "length", testPlan(tokenizer)],
];

/** As sent: through JSON, so parsing it back checks the wire form. */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/**
 * The Responses surface's values are exactly what its protocol (the schemas /openapi.json shows)
 * describes: parsing drops fields a schema does not name, so equality also finds undocumented ones.
 */
describe("the Responses API's answers and its protocol", () => {
  it.each(cases)("a whole response: %s", async (_name, texts, finishReason, plan) => {
    const completion = await collectCompletion(eventStream([started, ...texts.map(output), finished(finishReason)]), plan);
    const result = chatResultOf(completion);
    const response = wire(responseObject(request, meta, { output: outputItems(result), result }));
    expect(ResponsesRes.parse(response)).toEqual(response);
    expect(response.status).toBe(finishReason === "length" ? "incomplete" : "completed");
    expect(wire(responseObject(request, meta, null))).toMatchObject({ status: "in_progress", output: [], usage: null });
  });

  it("a whole response with the token metadata", async () => {
    const plan = testPlan(tokenizer, { logprobs: true, returnTokenIds: true, formatter: new LogprobFormatter(tokenizer, { asTokenIds: true, topCount: 0 }) });
    const completion = await collectCompletion(eventStream([started, output("ok"), finished("stop")]), plan);
    const result = chatResultOf(completion);
    const response: ResponsesResponse = wire({ ...responseObject(request, meta, { output: outputItems(result), result }), ...tokenMetadataOf(completion) });
    expect(ResponsesRes.parse(response)).toEqual(response);
    expect(response).toMatchObject({ prompt_token_ids: [1, 2, 3], token_ids: tokenizer.encode("ok"), logprobs: [-0.25, -0.25] });
  });

  it.each(cases)("every streamed event: %s", async (_name, texts, finishReason, plan) => {
    const events: ResponsesStreamEvent[] = [];
    const out = new ResponsesEventStream(async (event) => {
      events.push(wire(event));
    });
    await out.event({ type: "response.created", response: responseObject(request, meta, null) });
    await streamCompletion(eventStream([started, ...texts.map(output), finished(finishReason)]), { ...plan, streamUsage: { include: true, continuous: false } }, (chunk) => out.push(chunk));
    await out.finish();
    const final = responseObject(request, meta, { output: out.items, result: out.result() });
    await out.event({ type: final.status === "incomplete" ? "response.incomplete" : "response.completed", response: final });
    for (const event of events) expect(ResponsesStreamEvent.parse(event)).toEqual(event);
    expect(events.map((event) => ("sequence_number" in event ? event.sequence_number : -1))).toEqual(events.map((_, index) => index));
    expect(events.at(-1)!.type).toBe(finishReason === "length" ? "response.incomplete" : "response.completed");
  });
});
