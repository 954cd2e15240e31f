import { describe, expect, it } from "vitest";
import { chatTemplateConventions } from "./chat-render.js";
import { historiesOf, isChoice, isTrainableItem, normalizeTools, toChatMessage, type ChoiceJson } from "./trajectory.js";

const choice: ChoiceJson = {
  finish_reason: "stop",
  index: 0,
  message: { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }], refusal: null },
  logprobs: { content: [], refusal: null },
};

describe("trajectory items", () => {
  it("tells Choices (a message object, no role) from messages", () => {
    expect(isChoice(choice)).toBe(true);
    expect(isChoice({ role: "assistant", content: "x" })).toBe(false);
    expect(isChoice({ role: "assistant", message: {} })).toBe(false);
    expect(isChoice(null)).toBe(false);
  });

  it("trains Choices with logprobs, and other assistant turns only when allowed", () => {
    expect(isTrainableItem(choice, false)).toBe(true);
    expect(isTrainableItem({ ...choice, logprobs: null }, false)).toBe(false);
    expect(isTrainableItem({ ...choice, logprobs: null }, true)).toBe(true);
    expect(isTrainableItem({ role: "assistant", content: "x" }, false)).toBe(false);
    expect(isTrainableItem({ role: "assistant", content: "x" }, true)).toBe(true);
    expect(isTrainableItem({ role: "user", content: "x" }, true)).toBe(false);
  });

  it("turns a Choice into an assistant message and replaces null content", () => {
    expect(toChatMessage(choice)).toEqual({ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] });
    expect(toChatMessage({ ...choice, message: { content: "hi", tool_calls: [] } })).toEqual({ role: "assistant", content: "hi" });
    expect(toChatMessage({ role: "tool", content: null, tool_call_id: "c" })).toEqual({ role: "tool", content: "", tool_call_id: "c" });
  });

  it("lists the main history, then the additional ones", () => {
    const trajectory = { messages_and_choices: [], tools: null, additional_histories: [{ messages_and_choices: [] }] };
    expect(historiesOf(trajectory, ["t"]).map((h) => h.loc)).toEqual([["t"], ["t", "additional_histories", 0]]);
    expect(() => historiesOf({ messages_and_choices: [], additional_histories: "x" as never }, ["t"])).toThrow(/t\.additional_histories/);
  });

  it("wraps bare function tools", () => {
    expect(normalizeTools(null, [])).toBeUndefined();
    expect(normalizeTools([{ type: "function", function: { name: "a" } }, { name: "b" }], [])).toEqual([
      { type: "function", function: { name: "a" } },
      { type: "function", function: { name: "b" } },
    ]);
    expect(() => normalizeTools(["x"], ["tools"])).toThrow(/tools\.0/);
  });
});

describe("chatTemplateConventions", () => {
  it("turns thinking off and keeps past thinking when the template reads those flags; the caller overrides", () => {
    expect(chatTemplateConventions("{{ messages }}")).toEqual({ templateKwargs: {}, decodeToolArguments: false });
    expect(chatTemplateConventions("{% if enable_thinking %}{% endif %}{{ preserve_thinking }}").templateKwargs).toEqual({ enable_thinking: false, preserve_thinking: true });
    expect(chatTemplateConventions("enable_thinking", { enable_thinking: true }).templateKwargs).toEqual({ enable_thinking: true });
    expect(chatTemplateConventions("{% for k, v in tool_call.arguments|items %}").decodeToolArguments).toBe(true);
  });
});
