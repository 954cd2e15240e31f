import { describe, expect, it } from "vitest";
import { NamedToolStream, namedToolCall, RequiredToolStream, requiredToolCalls } from "./forced-tools.js";
import { extractToolCalls, HermesStreamParser, type ToolCallDelta } from "./hermes-tool-parser.js";
import { pythonJsonDumps } from "../../../python-format.js";
import { arrayElements, balancedValue, partialTagOverlap } from "./json-text.js";

function counter() {
  let n = 0;
  return () => `id-${n++}`;
}

/** Feeds `text` in pieces and reassembles content and calls from the deltas. */
function streamHermes(text: string, size: number) {
  const parser = new HermesStreamParser(counter());
  let content = "";
  const deltas: ToolCallDelta[] = [];
  for (let i = 0; i < text.length; i += size) {
    const out = parser.push(text.slice(i, i + size));
    content += out.content;
    deltas.push(...out.toolCalls);
  }
  const rest = parser.finish();
  return { content: content + rest.content, calls: assemble([...deltas, ...rest.toolCalls]) };
}

function assemble(deltas: ToolCallDelta[]) {
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const delta of deltas) {
    const call = (calls[delta.index] ??= { arguments: "" });
    if (delta.id) {
      expect(call.id, "one id per call").toBeUndefined();
      call.id = delta.id;
      call.name = delta.function.name;
    }
    call.arguments += delta.function.arguments;
  }
  return calls;
}

describe("JSON text helpers", () => {
  it("writes JSON like Python's json.dumps", () => {
    expect(pythonJsonDumps({ a: 1, b: [true, null, "é"], c: { d: "x\n" } }, { ensureAscii: false })).toBe('{"a": 1, "b": [true, null, "é"], "c": {"d": "x\\n"}}');
  });

  it("finds partial tags, balanced values and array elements", () => {
    expect(partialTagOverlap("abc<tool", "<tool_call>")).toBe(5);
    expect(partialTagOverlap("abc", "<tool_call>")).toBe(0);
    expect(balancedValue('{"a": "}{", "b": {"c": 1}} tail', 0)).toEqual({ value: '{"a": "}{", "b": {"c": 1}}', complete: true });
    expect(balancedValue('{"a": "\\"}', 0)).toEqual({ value: '{"a": "\\"}', complete: false });
    expect(arrayElements('[{"a": 1}, {"b": [2')).toEqual([
      { value: '{"a": 1}', complete: true },
      { value: '{"b": [2', complete: false },
    ]);
  });
});

describe("Hermes tool calls", () => {
  it("extracts calls from finished text as vLLM does", () => {
    expect(extractToolCalls("just text")).toBeNull();
    expect(extractToolCalls('Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris","days":2}}\n</tool_call><tool_call>{"name": "t", "arguments": {}}')).toEqual({
      content: "Let me check.",
      calls: [
        { name: "get_weather", arguments: '{"city": "Paris", "days": 2}' },
        { name: "t", arguments: "{}" },
      ],
    });
    expect(extractToolCalls('  <tool_call>{"name": "f", "arguments": {"x": "ü"}}</tool_call>')).toEqual({ content: null, calls: [{ name: "f", arguments: '{"x": "ü"}' }] });
    // Anything invalid keeps the whole text as content.
    expect(extractToolCalls("<tool_call>{not json}</tool_call>")).toBeNull();
    expect(extractToolCalls('<tool_call>{"name": "f"}</tool_call>')).toBeNull();
    expect(extractToolCalls('<tool_call>["f"]</tool_call>')).toBeNull();
  });

  it("streams content, then each call's name and arguments, identically for every chunking", () => {
    const text = 'Sure.<tool_call>{"name": "get_weather", "arguments": {"city": "Pa}ris", "n": [1, 2]}}</tool_call>\n<tool_call>{"name": "noop", "arguments": {}}</tool_call>';
    for (const size of [1, 2, 3, 7, 1000]) {
      const { content, calls } = streamHermes(text, size);
      expect(content, `size ${size}`).toBe("Sure.");
      expect(calls).toEqual([
        { id: "id-0", name: "get_weather", arguments: '{"city": "Pa}ris", "n": [1, 2]}' },
        { id: "id-1", name: "noop", arguments: "{}" },
      ]);
      for (const call of calls) expect(() => JSON.parse(call.arguments)).not.toThrow();
    }
  });

  it("holds back a partial start tag and releases it when it was not one", () => {
    const parser = new HermesStreamParser(counter());
    expect(parser.push("a <tool")).toEqual({ content: "a ", toolCalls: [] });
    expect(parser.push("box")).toEqual({ content: "<toolbox", toolCalls: [] });
    expect(parser.push("<tool_c")).toEqual({ content: "", toolCalls: [] });
    expect(parser.finish()).toEqual({ content: "<tool_c", toolCalls: [] });
  });

  it("sends a call only once its name is complete, and flushes scalar arguments at the end", () => {
    const parser = new HermesStreamParser(counter());
    expect(parser.push('<tool_call>{"name": "ge').toolCalls).toEqual([]);
    expect(parser.push('t", "arguments": 4').toolCalls).toEqual([{ index: 0, id: "id-0", type: "function", function: { name: "get", arguments: "" } }]);
    expect(parser.push("2}</tool_call>").toolCalls).toEqual([]);
    expect(parser.finish().toolCalls).toEqual([{ index: 0, function: { arguments: "42" } }]);
    expect(parser.toolCallsStarted).toBe(true);
  });
});

describe("forced tool choices", () => {
  it("reads a named choice's output as its arguments", () => {
    expect(namedToolCall("f", '{"a": 1}')).toEqual({ name: "f", arguments: '{"a": 1}' });
    const stream = new NamedToolStream("f", counter());
    expect(stream.push("")).toEqual([]);
    expect(stream.push('{"a"')).toEqual([{ index: 0, id: "id-0", type: "function", function: { name: "f", arguments: '{"a"' } }]);
    expect(stream.push(": 1}")).toEqual([{ index: 0, function: { arguments: ": 1}" } }]);
  });

  it("reads a required choice's array, and nothing from a cut-off one", () => {
    expect(requiredToolCalls('[{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}]')).toEqual([
      { name: "a", arguments: '{"x": 1}' },
      { name: "b", arguments: "{}" },
    ]);
    expect(requiredToolCalls('[{"name": "a", "param')).toEqual([]);
    expect(requiredToolCalls('{"name": "a"}')).toEqual([]);
  });

  it("streams a required choice element by element", () => {
    const text = '[{"name": "a", "parameters": {"x": "}"}}, {"name": "b", "parameters": {}}]';
    for (const size of [1, 4, 100]) {
      const stream = new RequiredToolStream(counter());
      const deltas: ToolCallDelta[] = [];
      for (let i = 0; i < text.length; i += size) deltas.push(...stream.push(text.slice(i, i + size)));
      expect(assemble(deltas), `size ${size}`).toEqual([
        { id: "id-0", name: "a", arguments: '{"x": "}"}' },
        { id: "id-1", name: "b", arguments: "{}" },
      ]);
    }
  });
});
