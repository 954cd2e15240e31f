import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../../testing/stores.js";
import type { CallStart, CallWrite } from "./calls/types.js";
import { JsonText, stringifyWithJsonText } from "./json-text.js";
import { SqlTraceCallStore } from "./trace-store.js";

describe("stringifyWithJsonText", () => {
  it("splices JsonText values and otherwise writes what JSON.stringify writes", () => {
    const row = { id: "a", n: 1.5, gone: undefined, f: () => 1, inputs: new JsonText('{"x":[1,"\\u0000"]}'), output: new JsonText("null"), nested: { k: [true] } };
    expect(stringifyWithJsonText(row)).toBe('{"id":"a","n":1.5,"inputs":{"x":[1,"\\u0000"]},"output":null,"nested":{"k":[true]}}');
    expect(JSON.parse(stringifyWithJsonText(row))).toEqual({ id: "a", n: 1.5, inputs: { x: [1, "\u0000"] }, output: null, nested: { k: [true] } });
    expect(stringifyWithJsonText({})).toBe("{}");
    expect(stringifyWithJsonText([1, 2])).toBe("[1,2]");
  });
});

/**
 * Calls sent with their stored JSON spliced in are, byte for byte, the calls parsed and serialized
 * again: every shape of inputs, output and attributes a call can hold, an OpenTelemetry span
 * (which joins the attributes, so they are parsed) and a running call.
 */
describe.each(testDialects)("calls sent as stored JSON text on %s", (dialect) => {
  let store: TestStore;
  let calls: SqlTraceCallStore;
  const P = "e/text";

  beforeAll(async () => {
    store = await openTestStore(dialect);
    calls = new SqlTraceCallStore(store);
    const outputs: unknown[] = [null, "plain", 3, [1, { a: "é\u2028" }], { big: 2 ** 70, small: 1e-7, neg: -0, s: "\ud800" }, true];
    const writes: CallWrite[] = outputs.map((output, i) => {
      const start: CallStart = {
        projectId: P,
        id: `c${i}`,
        traceId: `t${i}`,
        opName: "weave:///e/text/op/f:v0",
        displayName: i === 1 ? "named" : null,
        parentId: null,
        threadId: null,
        turnId: null,
        startedAt: `2024-01-01T00:00:0${i}.000000Z`,
        attributes: i === 2 ? {} : { weave: { client_version: "0.52" }, n: i },
        inputs: i === 0 ? {} : { prompt: `"quoted" ${i}`, list: [i, i / 3], deep: { a: { b: null } } },
        otelDump: i === 3 ? { name: "span", attributes: { k: 1 } } : null,
        wbUserId: null,
        wbRunId: null,
        wbRunStep: null,
      };
      const end = { projectId: P, id: `c${i}`, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: null, output, summary: { usage: { m: { requests: 1 } } }, wbRunStepEnd: null };
      return i === 5 ? { start } : { start, end };
    });
    await calls.writeCalls(writes);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("answers the same bytes as parsing and serializing each call", async () => {
    for (const columns of [undefined, ["inputs", "output"], ["attributes"]]) {
      const parsed: string[] = [];
      for await (const page of calls.queryCalls({ projectId: P, columns })) parsed.push(...page.map((call) => JSON.stringify(call)));
      const sent: string[] = [];
      for await (const page of calls.queryCallsToSend({ projectId: P, columns })) sent.push(...page.map(stringifyWithJsonText));
      expect(sent).toHaveLength(6);
      expect(sent).toEqual(parsed);
    }
    // Every inputs is spliced; the attributes that an OpenTelemetry span joins are not.
    const spliced = { inputs: 0, attributes: 0 };
    for await (const page of calls.queryCallsToSend({ projectId: P })) {
      for (const call of page) {
        if (call.inputs instanceof JsonText) spliced.inputs++;
        if (call.attributes instanceof JsonText) spliced.attributes++;
      }
    }
    expect(spliced).toEqual({ inputs: 6, attributes: 5 });
  });
});
