import { describe, expect, it } from "vitest";
import { ArrayLengthScan, topLevelArrayLengths } from "./json-array-lengths.js";

const lengthsOf = (value: unknown, keys = ["messages", "tools"]) => Object.fromEntries(topLevelArrayLengths(JSON.stringify(value, null, 1), keys));

describe("topLevelArrayLengths", () => {
  it("counts the elements of the named top-level arrays, whatever they hold", () => {
    const body = {
      model: "m",
      messages: [{ role: "user", content: 'a, [b] {c} "d" \\' }, { role: "assistant", content: [{ type: "text", text: "x,y" }] }, "s", 1, null, [1, [2, 3]]],
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

  it("gives the same lengths fed in pieces of any size, with keys, strings and arrays across the pieces", () => {
    const messages = Array.from({ length: 3_000 }, (_, i) => ({ role: "user", content: `${'q, [x] \\ " '.repeat(i % 7)}${i}` }));
    // A key written with an escape is not counted, wherever the pieces split it.
    const text = `${JSON.stringify({ tools: [], messages, stop: ["a"] }).slice(0, -1)},"messag\\u0065s":[1],"tools_x":[1,2]}`;
    const whole = Object.fromEntries(topLevelArrayLengths(text, ["messages", "tools"]));
    expect(whole).toEqual({ tools: 0, messages: 3_000 });
    for (const size of [1, 2, 3, 7, 64, 1000, 65_536]) {
      const scan = new ArrayLengthScan(["messages", "tools"]);
      for (let at = 0; at < text.length; at += size) scan.feed(text.slice(at, at + size));
      expect(Object.fromEntries(scan.lengths), `pieces of ${size}`).toEqual(whole);
    }
  });

  it("tells how many elements an array still open holds so far", () => {
    const scan = new ArrayLengthScan(["messages"]);
    scan.feed('{"model": "m", "messages": [{"a": [1, 2]}, "x, y"');
    expect(scan.openCount()).toEqual({ key: "messages", count: 2 });
    scan.feed(", 3]");
    expect(scan.openCount()).toBeUndefined();
    expect(scan.lengths.get("messages")).toBe(3);
  });

  it("keeps the longest of a repeated key and ignores keys written with escapes", () => {
    expect(topLevelArrayLengths('{"messages":[1,2,3],"messages":[1]}', ["messages"]).get("messages")).toBe(3);
    expect(topLevelArrayLengths('{"messag\\u0065s":[1,2,3]}', ["messages"]).size).toBe(0);
  });
});
