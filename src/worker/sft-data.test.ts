import { describe, expect, it } from "vitest";
import { sampledChoice } from "../testing/training.js";
import { parseSftRows, pickSftDataFile, SftDataError } from "./sft-data.js";

describe("SFT data", () => {
  it("picks train.jsonl, then trajectories.jsonl, then a lone .jsonl file", () => {
    expect(pickSftDataFile(["metadata.json", "trajectories.jsonl", "train.jsonl"])).toBe("train.jsonl");
    expect(pickSftDataFile(["metadata.json", "trajectories.jsonl"])).toBe("trajectories.jsonl");
    expect(pickSftDataFile(["data.jsonl"])).toBe("data.jsonl");
    expect(pickSftDataFile(["a.jsonl", "b.jsonl"])).toBeUndefined();
    expect(pickSftDataFile(["metadata.json"])).toBeUndefined();
  });

  it("reads message rows and trajectory rows, as ART's Trajectory.messages() would", () => {
    const toolCall = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    const choice = { ...sampledChoice(""), message: { role: "assistant", content: null, tool_calls: [toolCall] } };
    const text = [
      JSON.stringify({
        messages: [
          { role: "system", content: null },
          { role: "user", content: "q" },
          { role: "assistant", content: "a" },
        ],
        tools: [],
      }),
      "",
      JSON.stringify({ messages_and_choices: [{ role: "user", content: "q" }, choice, { role: "tool", content: "r", tool_call_id: "c1" }, sampledChoice("done")], tools: [{ type: "function" }] }),
    ].join("\n");
    expect(parseSftRows(text, "train.jsonl")).toEqual([
      {
        messages: [
          { role: "system", content: "" },
          { role: "user", content: "q" },
          { role: "assistant", content: "a" },
        ],
      },
      {
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "", tool_calls: [toolCall] },
          { role: "tool", content: "r", tool_call_id: "c1" },
          { role: "assistant", content: "done" },
        ],
        tools: [{ type: "function" }],
      },
    ]);
  });

  it("reads trajectory rows in ART's exchanges form from their last chat_completions exchange", () => {
    const first = { request: { messages: [{ role: "user", content: "q" }] }, response: { choices: [sampledChoice("a")] } };
    const last = {
      request: {
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "a" },
          { role: "user", content: "more" },
        ],
        tools: [{ type: "function" }],
      },
      response: { choices: [sampledChoice("b")] },
    };
    const rows = parseSftRows(JSON.stringify({ exchanges: { chat_completions: [first, last] }, reward: 1 }), "trajectories.jsonl");
    expect(rows).toEqual([
      {
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "a" },
          { role: "user", content: "more" },
          { role: "assistant", content: "b" },
        ],
        tools: [{ type: "function" }],
      },
    ]);
    expect(() => parseSftRows(JSON.stringify({ exchanges: { responses: [{}] } }), "t.jsonl")).toThrow(/line 1: 'responses' exchanges cannot be SFT data/);
    expect(() => parseSftRows(JSON.stringify({ exchanges: { chat_completions: [{ request: {} }] } }), "t.jsonl")).toThrow(/needs a chat_completions exchange/);
  });

  it.each([
    ["[1]", /train.jsonl line 2: expected a JSON object/],
    ['{"messages": "hi"}', /non-empty list/],
    ['{"messages": [{"content": "x"}]}', /message 0: expected a message object/],
    ['{"messages": [{"role": "assistant", "content": "a"}], "tools": {}}', /"tools" must be a list/],
  ])("names the line of a bad row: %s", (line, message) => {
    expect(() => parseSftRows(`\n${line}`, "train.jsonl")).toThrow(SftDataError);
    expect(() => parseSftRows(`\n${line}`, "train.jsonl")).toThrow(message);
  });
});
