import { describe, expect, it } from "vitest";
import { ChoiceStream, finalMessage, type MessageDelta, type OutputOptions } from "./choice-output.js";

function options(fields: Partial<OutputOptions> = {}): OutputOptions {
  let n = 0;
  return { reasoning: null, includeReasoning: true, toolChoice: { kind: "none" }, parallelToolCalls: true, newToolCallId: () => `call-${n++}`, ...fields };
}

/** Streams `text` in pieces and folds the deltas back into one message. */
function streamed(text: string, fields: Partial<OutputOptions>, size = 3) {
  const stream = new ChoiceStream(options(fields));
  const deltas: MessageDelta[] = [];
  for (let i = 0; i < text.length; i += size) {
    const delta = stream.push(text.slice(i, i + size));
    if (delta) deltas.push(delta);
  }
  const last = stream.finish();
  if (last) deltas.push(last);
  let content = "";
  let reasoning = "";
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const delta of deltas) {
    content += delta.content ?? "";
    reasoning += delta.reasoning ?? "";
    for (const call of delta.tool_calls ?? []) {
      const target = (calls[call.index] ??= { arguments: "" });
      if (call.id) Object.assign(target, { id: call.id, name: call.function.name });
      target.arguments += call.function.arguments;
    }
  }
  return { content, reasoning, calls, finishReason: stream.finishReason("stop") };
}

const CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';

describe("choice output", () => {
  it("keeps plain text as content", () => {
    expect(finalMessage("hello", "length", options())).toEqual({ content: "hello", reasoning: null, toolCalls: [], finishReason: "length" });
    expect(finalMessage("", "stop", options())).toMatchObject({ content: "" });
    expect(streamed("hello world", {})).toMatchObject({ content: "hello world", reasoning: "", calls: [] });
  });

  it("leaves tool-call text alone with tool_choice none", () => {
    expect(finalMessage(CALL, "stop", options()).content).toBe(CALL);
    expect(streamed(CALL, {}).content).toBe(CALL);
  });

  it("parses Hermes calls with tool_choice auto", () => {
    const message = finalMessage(`Checking.${CALL}`, "stop", options({ toolChoice: { kind: "auto" } }));
    expect(message).toEqual({
      content: "Checking.",
      reasoning: null,
      toolCalls: [{ id: "call-0", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
      finishReason: "tool_calls",
    });
    const stream = streamed(`Checking.${CALL}`, { toolChoice: { kind: "auto" } }, 4);
    expect(stream).toEqual({ content: "Checking.", reasoning: "", calls: [{ id: "call-0", name: "get_weather", arguments: '{"city": "Paris"}' }], finishReason: "tool_calls" });
    expect(finalMessage("no calls", "stop", options({ toolChoice: { kind: "auto" } }))).toMatchObject({ content: "no calls", toolCalls: [], finishReason: "stop" });
  });

  it("keeps only the first call without parallel_tool_calls", () => {
    const two = `${CALL}${CALL.replace("get_weather", "get_time")}`;
    expect(finalMessage(two, "stop", options({ toolChoice: { kind: "auto" }, parallelToolCalls: false })).toolCalls.map((call) => call.function.name)).toEqual(["get_weather"]);
    expect(streamed(two, { toolChoice: { kind: "auto" }, parallelToolCalls: false }).calls.map((call) => call.name)).toEqual(["get_weather"]);
    expect(streamed(two, { toolChoice: { kind: "auto" } }).calls.map((call) => call.name)).toEqual(["get_weather", "get_time"]);
  });

  it("reads forced tool choices", () => {
    const named = finalMessage('{"city": "Oslo"}', "stop", options({ toolChoice: { kind: "named", name: "get_weather" } }));
    expect(named).toEqual({ content: "", reasoning: null, toolCalls: [{ id: "call-0", type: "function", function: { name: "get_weather", arguments: '{"city": "Oslo"}' } }], finishReason: "stop" });
    expect(streamed('{"city": "Oslo"}', { toolChoice: { kind: "named", name: "get_weather" } })).toMatchObject({
      content: "",
      calls: [{ name: "get_weather", arguments: '{"city": "Oslo"}' }],
      finishReason: "stop",
    });
    const required = '[{"name": "get_weather", "parameters": {"city":"Rome"}}]';
    expect(finalMessage(required, "stop", options({ toolChoice: { kind: "required" } }))).toMatchObject({
      content: "",
      toolCalls: [{ function: { name: "get_weather", arguments: '{"city": "Rome"}' } }],
      finishReason: "tool_calls",
    });
    expect(finalMessage('[{"name": "get_w', "length", options({ toolChoice: { kind: "required" } }))).toMatchObject({ content: "", toolCalls: [], finishReason: "length" });
    expect(streamed(required, { toolChoice: { kind: "required" } })).toMatchObject({ calls: [{ name: "get_weather", arguments: '{"city":"Rome"}' }], finishReason: "tool_calls" });
  });

  it("splits reasoning before parsing tools, and drops it when not included", () => {
    const text = `<think>I should call it</think>${CALL}`;
    const message = finalMessage(text, "stop", options({ reasoning: "undecided", toolChoice: { kind: "auto" } }));
    expect(message).toMatchObject({ reasoning: "I should call it", content: null, finishReason: "tool_calls" });
    expect(message.toolCalls).toHaveLength(1);
    expect(streamed(text, { reasoning: "undecided", toolChoice: { kind: "auto" } }, 2)).toMatchObject({ reasoning: "I should call it", content: "", calls: [{ name: "get_weather" }] });
    expect(finalMessage("plan</think>answer", "stop", options({ reasoning: "reasoning", includeReasoning: false }))).toEqual({
      content: "answer",
      reasoning: null,
      toolCalls: [],
      finishReason: "stop",
    });
    expect(streamed("plan</think>answer", { reasoning: "reasoning", includeReasoning: false })).toMatchObject({ content: "answer", reasoning: "" });
  });
});
