import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";

describe.each(testDialects)("model registry on %s", (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(dialect, { baseModels: ["test/base"] });
  });
  afterEach(async () => {
    await t.close();
  });

  const register = (body: Record<string, unknown>, key = t.keys.alice) => t.request(key, { method: "POST", url: "/v1/preview/models", payload: body });

  it("registers under the caller's entity when entity is null", async () => {
    const res = await register({ entity: null, project: "proj", name: "agent-001", base_model: "test/base" });
    expect(res.statusCode).toBe(200);
    const model = res.json();
    expect(model).toMatchObject({ entity: "alice", project: "proj", name: "agent-001", base_model: "test/base" });
    expect(model.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof model.run_id).toBe("string");
  });

  it("returns the existing model with return_existing and 409 without it", async () => {
    const first = (await register({ project: "proj", name: "m", base_model: "test/base" })).json();
    const again = await register({ entity: null, project: "proj", name: "m", base_model: "test/base", return_existing: true });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.id);
    const dup = await register({ project: "proj", name: "m", base_model: "test/base" });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().detail).toMatch(/already exists/);
    // The same name in another entity is a different model.
    const bobs = await register({ project: "proj", name: "m", base_model: "test/base" }, t.keys.bob);
    expect(bobs.statusCode).toBe(200);
    expect(bobs.json().id).not.toBe(first.id);
  });

  it("registers concurrently without duplicates", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => register({ project: "proj", name: "race", base_model: "test/base", return_existing: true })));
    expect(new Set(results.map((res) => res.statusCode))).toEqual(new Set([200]));
    expect(new Set(results.map((res) => res.json().id)).size).toBe(1);
  });

  it("rejects a base model that is not served, and bad fields, with 422", async () => {
    const res = await register({ project: "proj", name: "m", base_model: "nope/missing" });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ["body", "base_model"], type: "value_error" });
    expect(res.json().detail[0].msg).toContain("test/base");
    const bad = await register({ project: "", name: "a/b", return_existing: "yes" });
    expect(bad.statusCode).toBe(422);
    const locs = bad.json().detail.map((d: { loc: string[] }) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.project", "body.name", "body.base_model", "body.return_existing"]));
    expect(bad.json().detail.find((d: { loc: string[] }) => d.loc[1] === "base_model")).toMatchObject({ msg: "Field required", type: "missing" });
  });

  it("refuses to create models in another entity", async () => {
    const res = await register({ entity: "bob", project: "proj", name: "m", base_model: "test/base" });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/cannot create models for entity 'bob'/);
  });

  it("lists checkpoints in pages and validates the query", async () => {
    const model = (await register({ project: "proj", name: "m", base_model: "test/base" })).json();
    for (const step of [1, 2, 3]) await insertCheckpoint(t.store.db, { modelId: model.id, step, files: null, metrics: { "train/reward": step } });
    const url = `/v1/preview/models/${model.id}/checkpoints`;
    const desc = (await t.request(t.keys.alice, { method: "GET", url: `${url}?order=desc&limit=1` })).json();
    expect(desc.data).toEqual([{ id: expect.any(String), step: 3, metrics: { "train/reward": 3 } }]);
    expect(desc).toMatchObject({ object: "list", has_more: true, first_id: desc.data[0].id, last_id: desc.data[0].id });
    const rest = (await t.request(t.keys.alice, { method: "GET", url: `${url}?order=desc&after=${desc.last_id}` })).json();
    expect(rest.data.map((c: { step: number }) => c.step)).toEqual([2, 1]);
    expect(rest.has_more).toBe(false);
    const defaults = (await t.request(t.keys.alice, { method: "GET", url })).json();
    expect(defaults.data.map((c: { step: number }) => c.step)).toEqual([1, 2, 3]);

    for (const [query, loc] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=2.5", "limit"],
      ["order=up", "order"],
      ["after=00000000-0000-4000-8000-000000000000", "after"],
    ]) {
      const res = await t.request(t.keys.alice, { method: "GET", url: `${url}?${query}` });
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc).toEqual(["query", loc]);
    }
    const badId = await t.request(t.keys.alice, { method: "GET", url: "/v1/preview/models/xyz/checkpoints" });
    expect(badId.statusCode).toBe(422);
    expect(badId.json().detail[0].loc).toEqual(["path", "model_id"]);
  });

  it("deletes checkpoints by step", async () => {
    const model = (await register({ project: "proj", name: "m", base_model: "test/base" })).json();
    for (const step of [1, 2]) await insertCheckpoint(t.store.db, { modelId: model.id, step, files: null });
    const url = `/v1/preview/models/${model.id}/checkpoints`;
    const res = await t.request(t.keys.alice, { method: "DELETE", url, payload: { steps: [1, 7] } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted_count: 1, not_found_steps: [7] });
    const bad = await t.request(t.keys.alice, { method: "DELETE", url, payload: { steps: [-1, "x"] } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["body", "steps", 0],
      ["body", "steps", 1],
    ]);
  });

  it("deletes a model with its checkpoints", async () => {
    const model = (await register({ project: "proj", name: "m", base_model: "test/base" })).json();
    for (const step of [1, 2]) await insertCheckpoint(t.store.db, { modelId: model.id, step, files: null });
    const res = await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${model.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ model_id: model.id, deleted_checkpoints: 2, deleted_run: true });
    expect((await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${model.id}` })).statusCode).toBe(404);
    // The name is free again.
    expect((await register({ project: "proj", name: "m", base_model: "test/base" })).json().id).not.toBe(model.id);
  });

  it("lists base and registered models in the OpenAI shape", async () => {
    await register({ project: "proj", name: "mine", base_model: "test/base" });
    await register({ project: "proj", name: "theirs", base_model: "test/base" }, t.keys.bob);
    const res = await t.request(t.keys.alice, { method: "GET", url: "/v1/models" });
    expect(res.statusCode).toBe(200);
    const ids = res.json().data.map((m: { id: string }) => m.id);
    expect(ids).toContain("test/base");
    expect(ids).toContain("wandb-artifact:///alice/proj/mine");
    expect(ids).not.toContain("wandb-artifact:///bob/proj/theirs");
    expect(res.json().data.find((m: { id: string }) => m.id === "wandb-artifact:///alice/proj/mine")).toMatchObject({ object: "model", owned_by: "alice", parent: "test/base" });
  });
});
