import { describe, expect, it } from "vitest";
import { callMessages, contentText, isChoice, trajectoryMessages } from "./messages.js";

const choice = {
  finish_reason: "tool_calls",
  index: 0,
  logprobs: {
    content: [
      { token: "token_id:72", bytes: [72, 105], logprob: -0.1 },
      { token: "!", logprob: -2.5 },
    ],
  },
  message: { role: "assistant", content: "Hi", tool_calls: [{ id: "call_1", type: "function", function: { name: "add", arguments: '{"a":1}' } }] },
};

describe("trajectory messages", () => {
  it("renders messages, sampled choices with tokens and tool calls, and tool results", () => {
    const messages = trajectoryMessages([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Add" },
          { type: "image_url", image_url: {} },
        ],
      },
      choice,
      { role: "tool", tool_call_id: "call_1", content: "2" },
    ]);
    expect(messages.map((m) => [m.role, m.content, m.sampled])).toEqual([
      ["system", "Be brief.", false],
      ["user", "Add\n[image]", false],
      ["assistant", "Hi", true],
      ["tool", "2", false],
    ]);
    expect(messages[2]!.toolCalls).toEqual([{ id: "call_1", name: "add", arguments: '{"a":1}' }]);
    expect(messages[2]!.tokens).toEqual([
      { text: "Hi", logprob: -0.1 },
      { text: "!", logprob: -2.5 },
    ]);
    expect(messages[2]!.finishReason).toBe("tool_calls");
    expect(messages[3]!.toolCallId).toBe("call_1");
  });

  it("tells a choice from an assistant message", () => {
    expect(isChoice(choice)).toBe(true);
    expect(isChoice({ role: "assistant", content: "x" })).toBe(false);
    expect(contentText(null)).toBe("");
    expect(contentText({ a: 1 })).toBe('{"a":1}');
  });
});

describe("call messages", () => {
  it("reads an OpenAI chat call's request and response, in either input shape", () => {
    const output = { choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "4" } }] };
    const direct = callMessages({ model: "m", messages: [{ role: "user", content: "2+2?" }] }, output)!;
    expect(direct.map((m) => [m.role, m.content])).toEqual([
      ["user", "2+2?"],
      ["assistant", "4"],
    ]);
    expect(callMessages({ params: { messages: [{ role: "user", content: "x" }] } }, null)!.map((m) => m.content)).toEqual(["x"]);
    expect(callMessages({ a: 1 }, output)).toBeUndefined();
  });

  it("sets the trainer's logprobs beside the sampler's on a choice's tokens, by item index", () => {
    const choice = {
      finish_reason: "stop",
      index: 0,
      message: { role: "assistant", content: "hi" },
      logprobs: {
        content: [
          { token: "h", logprob: -0.1 },
          { token: "i", logprob: -0.2 },
        ],
      },
    };
    const [user, assistant] = trajectoryMessages([{ role: "user", content: "x" }, choice], { "1": [-0.15, null] });
    expect(user!.tokens).toBeUndefined();
    expect(assistant!.tokens).toEqual([
      { text: "h", logprob: -0.1, trainerLogprob: -0.15 },
      { text: "i", logprob: -0.2, trainerLogprob: null },
    ]);
    expect(trajectoryMessages([choice], null)[0]!.tokens![0]).toEqual({ text: "h", logprob: -0.1 });
  });
});
