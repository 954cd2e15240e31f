import { describe, expect, it } from "vitest";
import type { CallSchema } from "../../store/trace/calls/types.js";
import { expandColumns, type RefReader } from "./ref-expansion.js";

/** A reader over fixed values, standing in for the objects side's refs reader at this seam. */
function readerOf(values: Record<string, unknown>): RefReader & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    async readRefs(_projectId, refs) {
      calls.push(refs);
      return refs.map((ref) => values[ref]);
    },
  };
}

const call = (inputs: Record<string, unknown>) => ({ id: "c", inputs }) as unknown as CallSchema;

describe("expand_columns", () => {
  it("replaces object refs with their values, shallowest first, keeping the ref under _ref", async () => {
    const model = "weave:///e/p/object/model:v1";
    const prompt = "weave:///e/p/object/prompt:v2";
    const reader = readerOf({ [model]: { name: "m", prompt }, [prompt]: { text: "hi" } });
    const calls = [call({ model }), call({ model, other: "weave:///e/p/call/x" })];
    await expandColumns("e/p", calls, ["inputs.model.prompt", "inputs.model", "inputs.other"], reader);
    expect(calls[0]!.inputs).toEqual({ model: { name: "m", prompt: { text: "hi", _ref: prompt }, _ref: model } });
    expect(calls[1]!.inputs!.other).toBe("weave:///e/p/call/x");
    expect(reader.calls).toEqual([[model], [prompt]]);
  });

  it("leaves refs it cannot resolve, and stores non-object values as they are", async () => {
    const known = "weave:///e/p/object/n:v1";
    const calls = [call({ a: known, b: "weave:///e/p/object/missing:v1" })];
    await expandColumns("e/p", calls, ["inputs.a", "inputs.b"], readerOf({ [known]: 42 }));
    expect(calls[0]!.inputs).toEqual({ a: 42, b: "weave:///e/p/object/missing:v1" });
  });
});
