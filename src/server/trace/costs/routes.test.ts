import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";
import { CostCreateRes, CostPurgeRes, CostQueryRes } from "./protocol.js";

describe.each(testDialects)("costs on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates, queries and purges project prices", async () => {
    const P = "alice/prices";
    const created = await alice.json("/cost/create", {
      project_id: P,
      costs: { "model-a": { prompt_token_cost: 0.001, completion_token_cost: 0.002 }, "model-b": { prompt_token_cost: 1e-6, completion_token_cost: 3e-6, provider_id: "acme", effective_date: "2024-01-01T00:00:00Z" } },
    });
    expect(created.ids.map(([llm]: [string, string]) => llm)).toEqual(["model-a", "model-b"]);
    const [[, idA], [, idB]] = created.ids;
    const all = await alice.json("/cost/query", { project_id: P, sort_by: [{ field: "llm_id", direction: "asc" }] });
    expect(all.results).toEqual([
      expect.objectContaining({ id: idA, llm_id: "model-a", prompt_token_cost: 0.001, completion_token_cost: 0.002, prompt_token_cost_unit: "USD", completion_token_cost_unit: "USD", provider_id: "default" }),
      expect.objectContaining({ id: idB, llm_id: "model-b", prompt_token_cost: 1e-6, provider_id: "acme", effective_date: "2024-01-01T00:00:00.000000Z", cache_read_input_token_cost: 0 }),
    ]);
    const some = await alice.json("/cost/query", { project_id: P, fields: ["llm_id", "prompt_token_cost"], query: { $expr: { $gt: [{ $getField: "prompt_token_cost" }, { $literal: 0.0001 }] } } });
    expect(some.results).toEqual([{ llm_id: "model-a", prompt_token_cost: 0.001 }]);
    const refused = await alice.post("/cost/purge", { project_id: P, query: { $expr: { $eq: [{ $getField: "llm_id" }, { $literal: "model-a" }] } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().reason).toBe("Can only purge costs by specifying one or more cost ids");
    await alice.json("/cost/purge", { project_id: P, query: { $expr: { $in: [{ $getField: "id" }, [{ $literal: idA }, { $literal: idB }]] } } });
    expect((await alice.json("/cost/query", { project_id: P })).results).toEqual([]);
    expect((await traceClient(t, t.keys.bob).post("/cost/query", { project_id: P })).statusCode).toBe(404);
  });

  it("answers exactly what its protocol (the schemas /openapi.json shows) describes", async () => {
    const P = "alice/typed";
    const created = await alice.json("/cost/create", { project_id: P, costs: { "model-a": { prompt_token_cost: 0.5, completion_token_cost: 1 } } });
    // Parsing drops fields a schema does not name, so equality also finds undocumented ones.
    expect(CostCreateRes.parse(created)).toEqual(created);
    for (const fields of [undefined, ["llm_id", "prompt_token_cost"], ["pricing_level", "pricing_level_id", "created_at", "created_by"]]) {
      const queried = await alice.json("/cost/query", { project_id: P, fields });
      expect(queried.results).toHaveLength(1);
      expect(CostQueryRes.parse(queried)).toEqual(queried);
    }
    const purged = await alice.json("/cost/purge", { project_id: P, query: { $expr: { $eq: [{ $getField: "id" }, { $literal: created.ids[0][1] }] } } });
    expect(CostPurgeRes.parse(purged)).toEqual(purged);
    const paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths;
    expect(paths["/trace/cost/query"].post.responses["200"].content["application/json"].schema.properties.results.type).toBe("array");
  });

  it("prices calls with the project price in effect when they started", async () => {
    const P = "alice/priced";
    const usage = { "gpt-x": { prompt_tokens: 1000, completion_tokens: 500, requests: 1 }, unpriced: { prompt_tokens: 7 } };
    await alice.json("/call/upsert_batch", {
      batch: [
        { mode: "start", req: { start: startOf(P, { id: "old", started_at: "2024-01-05T00:00:00Z" }) } },
        { mode: "end", req: { end: endOf(P, "old", { summary: { usage } }) } },
        { mode: "start", req: { start: startOf(P, { id: "new", started_at: "2024-03-05T00:00:00Z" }) } },
        { mode: "end", req: { end: endOf(P, "new", { summary: { usage } }) } },
        { mode: "start", req: { start: startOf(P, { id: "none", started_at: "2024-03-05T00:00:00Z" }) } },
        { mode: "end", req: { end: endOf(P, "none", { summary: { usage: { unpriced: { prompt_tokens: 1 } } } }) } },
      ],
    });
    await alice.json("/cost/create", { project_id: P, costs: { "gpt-x": { prompt_token_cost: 0.01, completion_token_cost: 0.02, effective_date: "2024-01-01T00:00:00Z" } } });
    await alice.json("/cost/create", { project_id: P, costs: { "gpt-x": { prompt_token_cost: 0.1, completion_token_cost: 0.2, effective_date: "2024-02-01T00:00:00Z" } } });
    await traceClient(t, t.keys.bob).json("/cost/create", { project_id: "bob/other", costs: { unpriced: { prompt_token_cost: 5, completion_token_cost: 5 } } });

    const calls = await alice.lines("/calls/stream_query", { project_id: P, include_costs: true, columns: ["summary"] });
    const costs = Object.fromEntries(calls.map((call) => [call.id, call.summary.weave.costs]));
    expect(costs.old["gpt-x"]).toMatchObject({
      prompt_tokens: 1000,
      completion_tokens: 500,
      requests: 1,
      total_tokens: 1500,
      prompt_token_cost: 0.01,
      completion_token_cost: 0.02,
      pricing_level: "project",
      pricing_level_id: P,
      effective_date: "2024-01-01T00:00:00.000000Z",
    });
    expect(costs.old["gpt-x"].prompt_tokens_total_cost).toBeCloseTo(10);
    expect(costs.old["gpt-x"].completion_tokens_total_cost).toBeCloseTo(10);
    expect(costs.new["gpt-x"].prompt_tokens_total_cost).toBeCloseTo(100);
    expect(costs.old.unpriced).toBeUndefined();
    expect(costs.none).toBeUndefined();
    const plain = await alice.lines("/calls/stream_query", { project_id: P });
    expect(plain[0].summary.weave.costs).toBeUndefined();

    const read = await alice.json("/call/read", { project_id: P, id: "new", include_costs: true });
    expect(read.call.summary.weave.costs["gpt-x"].completion_tokens_total_cost).toBeCloseTo(100);
    const usageRes = await alice.json("/calls/usage", { project_id: P, call_ids: ["old", "new"], include_costs: true });
    expect(usageRes.call_usage.old["gpt-x"]).toMatchObject({ prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500, requests: 1 });
    expect(usageRes.call_usage.old["gpt-x"].prompt_tokens_total_cost).toBeCloseTo(10);
    expect(usageRes.call_usage.old.unpriced).toMatchObject({ prompt_tokens: 7, prompt_tokens_total_cost: 0 });
  });
});
