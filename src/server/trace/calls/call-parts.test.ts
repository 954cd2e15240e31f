import { describe, expect, it } from "vitest";
import { quickCallEnd, quickCallStart, QUICK_END_FIELDS, QUICK_START_FIELDS } from "./call-parts.js";
import { toCallEnd, toCallStart } from "./routes.js";
import { CallEndReq, CallStartReq, EndedCallSchemaForInsert, StartedCallSchemaForInsert } from "./protocol.js";

/** Values each field is tried with: right and wrong types, empty text, other timestamp forms. */
const VARIANTS: unknown[] = [
  undefined,
  null,
  "",
  "x",
  "weave:///e/p/op/f:v1",
  0,
  7,
  -1,
  1.5,
  2 ** 60,
  true,
  [],
  ["a"],
  {},
  { a: 1 },
  { constructor: { prototype: 1 } },
  JSON.parse('{"__proto__": {"a": 1}}'),
  "2024-05-01T12:00:00Z",
  "2024-05-01T12:00:00.123456+00:00",
  "2024-05-01T14:00:00+02:00",
  "2024-02-30T00:00:00Z",
  " 2024-05-01T12:00:00Z",
  1714564800,
];

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

const baseStart = () => ({
  project_id: "e/p",
  id: "c1",
  trace_id: "t1",
  op_name: "op",
  display_name: "D",
  parent_id: null,
  thread_id: "th",
  started_at: "2024-05-01T12:00:00.5Z",
  attributes: { a: 1 },
  inputs: { x: "y" },
  wb_run_step: 3,
  extra: "ignored",
});
const baseEnd = () => ({ project_id: "e/p", id: "c1", ended_at: "2024-05-01T12:00:01Z", exception: null, output: { z: 1 }, summary: { usage: {} }, wb_run_step_end: 4 });

/** Generated ids differ from run to run; compare them by presence. */
const withoutGeneratedIds = (call: Record<string, unknown>, req: Record<string, unknown>) => ({ ...call, id: req.id == null ? "generated" : call.id, traceId: req.trace_id == null ? "generated" : call.traceId });

describe("quick reading of upsert_batch items", () => {
  it("reads the same fields as the schemas", () => {
    expect(new Set(QUICK_START_FIELDS)).toEqual(new Set(Object.keys(StartedCallSchemaForInsert.shape)));
    expect(new Set(QUICK_END_FIELDS)).toEqual(new Set(Object.keys(EndedCallSchemaForInsert.shape)));
  });

  it("accepts only what the schemas accept, and reads it the same way", () => {
    const next = random(3);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 4000; i++) {
      const isStart = i % 2 === 0;
      const fields: Record<string, unknown> = isStart ? baseStart() : baseEnd();
      const names = isStart ? QUICK_START_FIELDS : QUICK_END_FIELDS;
      // Change one or two fields (or none) to a random variant.
      for (let change = Math.floor(next() * 3); change > 0; change--) {
        const name = names[Math.floor(next() * names.length)]!;
        const value = VARIANTS[Math.floor(next() * VARIANTS.length)];
        if (value === undefined) delete fields[name];
        else fields[name] = value;
      }
      const req = next() < 0.03 ? [fields] : isStart ? { start: fields } : { end: fields };
      const quick = isStart ? quickCallStart(req, "u") : quickCallEnd(req);
      const checked = isStart ? CallStartReq.safeParse(req) : CallEndReq.safeParse(req);
      if (quick === undefined) {
        if (!checked.success) refused++;
        continue;
      }
      accepted++;
      expect(checked.success, JSON.stringify(req)).toBe(true);
      const expected = isStart ? toCallStart((checked.data as { start: Parameters<typeof toCallStart>[0] }).start, "u") : toCallEnd((checked.data as { end: Parameters<typeof toCallEnd>[0] }).end);
      expect(withoutGeneratedIds(quick as never, fields), JSON.stringify(req)).toEqual(withoutGeneratedIds(expected as never, fields));
    }
    expect(accepted).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });
});
