import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/q";
const at = (seconds: number) => new Date(Date.UTC(2024, 4, 1, 12, 0, 0) + seconds * 1000).toISOString();

/** Four calls with mixed input types, as the operator tests expect them. */
const CALLS = [
  {
    start: { id: "c1", trace_id: "t1", op_name: "weave:///alice/q/op/alpha:v1", started_at: at(0), inputs: { n: 1, s: "apple", flag: true, nested: { k: "x" }, list: [10, 20] }, wb_run_id: "r1" },
    end: { ended_at: at(1), output: { score: 0.5 } },
  },
  {
    start: { id: "c2", trace_id: "t2", op_name: "weave:///alice/q/op/alpha:v2", started_at: at(2), inputs: { n: "2", s: "Banana", flag: "true", list: [30], ref: "weave:///alice/q/object/ds:abc" } },
    end: { ended_at: at(5), output: { score: 0.9, made: "weave:///alice/q/object/model:def" }, exception: "bad" },
  },
  { start: { id: "c3", trace_id: "t1", parent_id: "c1", op_name: "beta", display_name: "Gamma", started_at: at(4), inputs: { n: 10, s: "cherry" } } },
  { start: { id: "c4", trace_id: "t3", op_name: "beta", started_at: at(6), inputs: {}, thread_id: "th", turn_id: "c4" }, end: { ended_at: at(6.2), output: "text" } },
];

describe.each(testDialects)("calls queries on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
    const batch = CALLS.flatMap(({ start, end }) => [{ mode: "start", req: { start: startOf(P, start) } }, ...(end ? [{ mode: "end", req: { end: endOf(P, start.id, end) } }] : [])]);
    await alice.json("/call/upsert_batch", { batch });
  });
  afterAll(async () => {
    await t.close();
  });

  const ids = async (body: Record<string, unknown>) => (await alice.lines("/calls/stream_query", { project_id: P, ...body })).map((call) => call.id);
  const where = (expr: unknown) => ids({ query: { $expr: expr } });
  const field = (name: string) => ({ $getField: name });
  const lit = (value: unknown) => ({ $literal: value });

  it("answers /calls/query with the stream's rows as one JSON object, written page by page", async () => {
    const project = "alice/many";
    const batch = Array.from({ length: 1150 }, (_, i) => ({ mode: "start", req: { start: startOf(project, { id: `m${String(i).padStart(5, "0")}`, op_name: "many", started_at: at(i) }) } }));
    await alice.json("/call/upsert_batch", { batch });
    const res = await alice.post("/calls/query", { project_id: project });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const calls = res.json().calls as { id: string }[];
    expect(calls.map((call) => call.id)).toEqual(batch.map((item) => item.req.start.id));
    expect(calls).toEqual(await alice.lines("/calls/stream_query", { project_id: project }));
    expect((await alice.post("/calls/query", { project_id: "alice/none" })).json()).toEqual({ calls: [] });
  });

  it("streams JSON Lines in started_at order by default", async () => {
    const res = await alice.post("/calls/stream_query", { project_id: P });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/jsonl");
    expect(res.body.endsWith("\n")).toBe(true);
    expect(await ids({})).toEqual(["c1", "c2", "c3", "c4"]);
    const batch = await alice.json("/calls/query", { project_id: P, limit: 2 });
    expect(batch.calls.map((call: { id: string }) => call.id)).toEqual(["c1", "c2"]);
  });

  it("compares type-tolerantly: numbers, numeric strings, booleans and their text", async () => {
    expect(await where({ $eq: [field("inputs.n"), lit(1)] })).toEqual(["c1"]);
    expect(await where({ $eq: [field("inputs.n"), lit("2")] })).toEqual(["c2"]);
    expect(await where({ $eq: [field("inputs.n"), lit(2)] })).toEqual(["c2"]);
    expect(await where({ $eq: [field("inputs.flag"), lit(true)] })).toEqual(["c1", "c2"]);
    expect(await where({ $eq: [field("inputs.flag"), lit("true")] })).toEqual(["c1", "c2"]);
    expect(await where({ $eq: [field("inputs.s"), lit(null)] })).toEqual(["c4"]);
    expect(await where({ $eq: [lit("apple"), field("inputs.s")] })).toEqual(["c1"]);
    expect(await where({ $eq: [field("output.score"), lit(0.9)] })).toEqual(["c2"]);
    expect(await where({ $eq: [field("output"), lit("text")] })).toEqual(["c4"]);
  });

  it("orders numbers numerically and strings bytewise", async () => {
    expect(await where({ $gt: [field("inputs.n"), lit(1)] })).toEqual(["c2", "c3"]);
    expect(await where({ $lte: [field("inputs.n"), lit(2)] })).toEqual(["c1", "c2"]);
    expect(await where({ $lt: [field("inputs.s"), lit("b")] })).toEqual(["c1", "c2"]);
    expect(await where({ $gt: [lit(5), field("inputs.n")] })).toEqual(["c1", "c2"]);
    expect(await where({ $gte: [{ $convert: { input: field("inputs.n"), to: "double" } }, lit(2)] })).toEqual(["c2", "c3"]);
  });

  it("compares timestamps given as ISO text or Unix seconds", async () => {
    expect(await where({ $gte: [field("started_at"), lit("2024-05-01T12:00:04Z")] })).toEqual(["c3", "c4"]);
    expect(await where({ $gte: [field("started_at"), lit(Date.UTC(2024, 4, 1, 12, 0, 4) / 1000)] })).toEqual(["c3", "c4"]);
    expect(await where({ $lt: [field("ended_at"), lit("2024-05-01T12:00:02+00:00")] })).toEqual(["c1"]);
  });

  it("supports $in, $contains, $not, $and, $or and nested paths", async () => {
    expect(await where({ $in: [field("inputs.s"), [lit("apple"), lit("cherry")]] })).toEqual(["c1", "c3"]);
    expect(await where({ $in: [field("inputs.n"), [lit(10), lit("2")]] })).toEqual(["c2", "c3"]);
    expect(await where({ $contains: { input: field("inputs.s"), substr: lit("an") } })).toEqual(["c2"]);
    expect(await where({ $contains: { input: field("inputs.s"), substr: lit("A"), case_insensitive: true } })).toEqual(["c1", "c2"]);
    expect(await where({ $not: [{ $eq: [field("inputs.s"), lit("apple")] }] })).toEqual(["c2", "c3", "c4"]);
    expect(await where({ $and: [{ $eq: [field("op_name"), lit("beta")] }, { $eq: [field("display_name"), lit("Gamma")] }] })).toEqual(["c3"]);
    expect(await where({ $or: [{ $eq: [field("inputs.list.1"), lit(20)] }, { $eq: [field("inputs.nested.k"), lit("zzz")] }] })).toEqual(["c1"]);
    expect(await where({ $eq: [field("inputs.nested.k"), lit("x")] })).toEqual(["c1"]);
  });

  it("converts values", async () => {
    expect(await where({ $eq: [{ $convert: { input: field("inputs.n"), to: "string" } }, lit("10")] })).toEqual(["c3"]);
    expect(await where({ $eq: [{ $convert: { input: field("inputs.s"), to: "exists" } }, lit(false)] })).toEqual(["c4"]);
    expect(await where({ $eq: [{ $convert: { input: field("inputs.n"), to: "int" } }, lit(10)] })).toEqual(["c3"]);
    expect(await where({ $eq: [{ $convert: { input: field("inputs.flag"), to: "bool" } }, lit(true)] })).toEqual(["c1", "c2"]);
  });

  it("filters on the computed summary fields", async () => {
    expect(await where({ $eq: [field("summary.weave.status"), lit("error")] })).toEqual(["c2"]);
    expect(await where({ $eq: [field("summary.weave.status"), lit("running")] })).toEqual(["c3"]);
    expect(await where({ $gt: [field("summary.weave.latency_ms"), lit(1500)] })).toEqual(["c2"]);
    expect(await where({ $eq: [field("summary.weave.trace_name"), lit("alpha")] })).toEqual(["c1", "c2"]);
    expect(await where({ $eq: [field("summary.weave.trace_name"), lit("Gamma")] })).toEqual(["c3"]);
  });

  it("applies the filter fields", async () => {
    expect(await ids({ filter: { op_names: ["beta"] } })).toEqual(["c3", "c4"]);
    expect(await ids({ filter: { op_names: ["weave:///alice/q/op/alpha:*"] } })).toEqual(["c1", "c2"]);
    expect(await ids({ filter: { trace_ids: ["t1"] } })).toEqual(["c1", "c3"]);
    expect(await ids({ filter: { parent_ids: ["c1"] } })).toEqual(["c3"]);
    expect(await ids({ filter: { call_ids: ["c4", "c2"] } })).toEqual(["c2", "c4"]);
    expect(await ids({ filter: { trace_roots_only: true } })).toEqual(["c1", "c2", "c4"]);
    expect(await ids({ filter: { thread_ids: ["th"], turn_ids: ["c4"] } })).toEqual(["c4"]);
    expect(await ids({ filter: { wb_run_ids: ["r1"] } })).toEqual(["c1"]);
    expect(await ids({ filter: { input_refs: ["weave:///alice/q/object/ds:abc"] } })).toEqual(["c2"]);
    expect(await ids({ filter: { output_refs: ["weave:///alice/q/object/model:def"] } })).toEqual(["c2"]);
    expect(await ids({ filter: { op_names: [] } })).toHaveLength(4);
    const tooLong = await alice.post("/calls/stream_query", { project_id: P, filter: { call_ids: Array.from({ length: 1001 }, (_, i) => `x${i}`) } });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().reason).toMatch(/call_ids/);
  });

  it("sorts by columns and JSON paths with NULLs last, then limits and offsets", async () => {
    expect(await ids({ sort_by: [{ field: "inputs.n", direction: "asc" }] })).toEqual(["c1", "c2", "c3", "c4"]);
    expect(await ids({ sort_by: [{ field: "inputs.n", direction: "desc" }] })).toEqual(["c3", "c2", "c1", "c4"]);
    expect(await ids({ sort_by: [{ field: "inputs.s", direction: "asc" }] })).toEqual(["c2", "c1", "c3", "c4"]);
    expect(await ids({ sort_by: [{ field: "summary.weave.latency_ms", direction: "desc" }] })).toEqual(["c2", "c1", "c4", "c3"]);
    expect(
      await ids({
        sort_by: [
          { field: "op_name", direction: "asc" },
          { field: "started_at", direction: "desc" },
        ],
      }),
    ).toEqual(["c4", "c3", "c1", "c2"]);
    expect(await ids({ sort_by: [{ field: "started_at", direction: "desc" }], limit: 2, offset: 1 })).toEqual(["c3", "c2"]);
    expect(
      await ids({
        sort_by: [
          { field: "display_name", direction: "asc" },
          { field: "id", direction: "asc" },
        ],
      }),
    ).toEqual(["c3", "c1", "c2", "c4"]);
    expect((await ids({ sort_by: [] })).sort()).toEqual(["c1", "c2", "c3", "c4"]);
  });

  it("returns only the asked columns plus the required ones", async () => {
    const [call] = await alice.lines("/calls/stream_query", { project_id: P, columns: ["inputs.n", "output"], filter: { call_ids: ["c1"] } });
    expect(call).toEqual({ id: "c1", project_id: P, op_name: "weave:///alice/q/op/alpha:v1", trace_id: "t1", started_at: "2024-05-01T12:00:00.000000Z", inputs: CALLS[0]!.start.inputs, output: { score: 0.5 }, attributes: {} });
    const [withSummary] = await alice.lines("/calls/stream_query", { project_id: P, columns: ["summary"], filter: { call_ids: ["c2"] } });
    expect(withSummary.summary.weave).toEqual({ status: "error", latency_ms: 3000, trace_name: "alpha" });
    expect(withSummary).toHaveProperty("exception", "bad");
  });

  it("reports storage sizes", async () => {
    const [root] = await alice.lines("/calls/stream_query", { project_id: P, filter: { call_ids: ["c1"] }, include_storage_size: true, include_total_storage_size: true });
    const size = (call: { attributes: unknown; inputs: unknown; output: unknown; summary: unknown }) =>
      Buffer.byteLength(JSON.stringify(call.attributes)) + Buffer.byteLength(JSON.stringify(call.inputs)) + Buffer.byteLength(JSON.stringify(call.output)) + Buffer.byteLength("{}");
    expect(root.storage_size_bytes).toBe(size({ ...root, attributes: {} }));
    expect(root.total_storage_size_bytes).toBeGreaterThan(root.storage_size_bytes);
    const [child] = await alice.lines("/calls/stream_query", { project_id: P, filter: { call_ids: ["c3"] }, include_total_storage_size: true });
    expect(child.total_storage_size_bytes).toBeNull();
    const stats = await alice.json("/calls/query_stats", { project_id: P, filter: { call_ids: ["c1"] }, include_total_storage_size: true });
    expect(stats.total_storage_size_bytes).toBe(root.total_storage_size_bytes);
  });

  it("counts matches, saturating at the limit", async () => {
    expect(await alice.json("/calls/query_stats", { project_id: P })).toEqual({ count: 4, has_more: false });
    expect(await alice.json("/calls/query_stats", { project_id: P, limit: 3 })).toEqual({ count: 3, has_more: true });
    expect(await alice.json("/calls/query_stats", { project_id: P, limit: 4, query: { $expr: { $eq: [field("op_name"), lit("beta")] } } })).toEqual({ count: 2, has_more: false });
    const zero = await alice.post("/calls/query_stats", { project_id: P, limit: 0 });
    expect(zero.statusCode).toBe(400);
  });

  it("refuses malformed and unrunnable queries with clear errors", async () => {
    const shape = await alice.post("/calls/stream_query", { project_id: P, query: { $expr: { $eq: [field("inputs.n")] } } });
    expect(shape.statusCode).toBe(422);
    expect(shape.json().detail[0].loc).toEqual(["body", "query", "$expr", "$eq"]);
    const twoOps = await alice.post("/calls/stream_query", { project_id: P, query: { $expr: { $eq: [lit(1), lit(1)], $gt: [lit(1), lit(0)] } } });
    expect(twoOps.statusCode).toBe(422);
    let deep: unknown = { $eq: [lit(1), lit(1)] };
    for (let i = 0; i < 100; i++) deep = { $not: [deep] };
    expect((await alice.post("/calls/stream_query", { project_id: P, query: { $expr: deep } })).statusCode).toBe(422);
    for (const expr of [{ $and: [] }, { $eq: [field("nope"), lit(1)] }, { $eq: [field("inputs..n"), lit(1)] }]) {
      const res = await alice.post("/calls/stream_query", { project_id: P, query: { $expr: expr } });
      expect(res.statusCode, JSON.stringify(expr)).toBe(400);
      expect(res.json().reason).toEqual(expect.any(String));
    }
    const badSort = await alice.post("/calls/stream_query", { project_id: P, sort_by: [{ field: "inputs.", direction: "asc" }] });
    expect(badSort.statusCode).toBe(400);
    const badDirection = await alice.post("/calls/stream_query", { project_id: P, sort_by: [{ field: "id", direction: "up" }] });
    expect(badDirection.statusCode).toBe(422);
  });

  it("pages through results larger than one page in every order", async () => {
    const project = "alice/q-many";
    const batch = Array.from({ length: 260 }, (_, i) => ({ mode: "start", req: { start: startOf(project, { id: `m${String(i).padStart(3, "0")}`, started_at: at(Math.floor(i / 3)), inputs: { i } }) } }));
    await alice.json("/call/upsert_batch", { batch });
    const all = await alice.lines("/calls/stream_query", { project_id: project, columns: ["id"] });
    expect(all.map((call) => call.id)).toEqual(batch.map((item) => item.req.start.id));
    const desc = await alice.lines("/calls/stream_query", { project_id: project, columns: ["id"], sort_by: [{ field: "inputs.i", direction: "desc" }] });
    expect(desc.map((call) => call.id)).toEqual(batch.map((item) => item.req.start.id).reverse());
    const window = await alice.lines("/calls/stream_query", { project_id: project, columns: ["id"], offset: 50, limit: 150 });
    expect(window.map((call) => call.id)).toEqual(batch.slice(50, 200).map((item) => item.req.start.id));
  });

  it("keeps other entities' projects out of reach", async () => {
    for (const url of ["/calls/stream_query", "/calls/query", "/calls/query_stats", "/calls/usage", "/trace/usage", "/threads/stream_query"]) {
      const res = await traceClient(t, t.keys.bob).post(url, { project_id: P, call_ids: [], start: at(0) });
      expect(res.statusCode, url).toBe(404);
    }
    const stats = await traceClient(t, t.keys.bob).post("/calls/stats", { project_id: P, start: at(0) });
    expect(stats.statusCode).toBe(404);
  });
});
