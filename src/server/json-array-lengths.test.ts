import { describe, expect, it } from "vitest";
import { topLevelArrayLengths, topLevelArrayLengthsInTurns } from "./json-array-lengths.js";

const lengthsOf = (value: unknown, keys = ["messages", "tools"]) => Object.fromEntries(topLevelArrayLengths(JSON.stringify(value, null, 1), keys));

describe("topLevelArrayLengths", () => {
  it("counts the elements of the named top-level arrays, whatever they hold", () => {
    const body = {
      model: "m",
      messages: [{ role: "user", content: "a, [b] {c} \"d\" \\" }, { role: "assistant", content: [{ type: "text", text: "x,y" }] }, "s", 1, null, [1, [2, 3]]],
      tools: [],
      other: [1, 2, 3],
      nested: { messages: [1, 2, 3, 4] },
    };
    expect(lengthsOf(body)).toEqual({ messages: 6, tools: 0 });
    expect(lengthsOf({ messages: [{}] })).toEqual({ messages: 1 });
    expect(lengthsOf({ messages: "not an array", tools: [[]] })).toEqual({ tools: 1 });
  });

  it("matches the parsed lengths on large bodies", () => {
    const messages = Array.from({ length: 20_000 }, (_, i) => ({ role: "user", content: `m${i}, "q" [${i}]` }));
    expect(topLevelArrayLengths(JSON.stringify({ messages }), ["messages"]).get("messages")).toBe(20_000);
  });

  it("gives the same lengths a slice per turn of the event loop, with strings and arrays across the slices", async () => {
    const messages = Array.from({ length: 30_000 }, (_, i) => ({ role: "user", content: `${"q, [x] \\ \" ".repeat(i % 7)}${i}` }));
    const text = JSON.stringify({ tools: [], messages, stop: ["a"] });
    expect(text.length).toBeGreaterThan(3 * 256 * 1024);
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const lengths = await topLevelArrayLengthsInTurns(text, ["messages", "tools"]);
    clearInterval(ticking);
    expect(Object.fromEntries(lengths)).toEqual({ tools: 0, messages: 30_000 });
    expect(Object.fromEntries(lengths)).toEqual(Object.fromEntries(topLevelArrayLengths(text, ["messages", "tools"])));
    expect(turns).toBeGreaterThan(0);
  });

  it("keeps the longest of a repeated key and ignores keys written with escapes", () => {
    expect(topLevelArrayLengths('{"messages":[1,2,3],"messages":[1]}', ["messages"]).get("messages")).toBe(3);
    expect(topLevelArrayLengths('{"messag\\u0065s":[1,2,3]}', ["messages"]).size).toBe(0);
  });
});
