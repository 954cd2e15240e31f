import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCheckpoint, pageCheckpoints } from "../store/checkpoints.js";
import { startTestApp, type TestApp } from "../testing/app.js";
import { testDialects } from "../testing/stores.js";

/**
 * Every route that takes an id answers another entity's id exactly as an unknown one (404), and
 * leaves the other entity's data untouched. Add each new id-taking route here.
 */
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe.each(testDialects)("tenant isolation on %s", (dialect) => {
  let t: TestApp;
  let bobsModel: string;
  let bobsJob: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    const res = await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "secret", base_model: "test/base" } });
    bobsModel = res.json().id;
    await insertCheckpoint(t.store.db, { modelId: bobsModel, step: 1, files: null });
    const job = await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/training-jobs", payload: { model_id: bobsModel, trajectory_groups: [] } });
    bobsJob = job.json().id;
  });
  afterAll(async () => {
    await t.close();
  });

  const routes = () =>
    [
      { method: "GET", url: `/v1/preview/training-jobs/${bobsJob}` },
      { method: "GET", url: `/v1/preview/training-jobs/${bobsJob}/events` },
      { method: "POST", url: `/v1/preview/training-jobs/${bobsJob}/cancel` },
      { method: "POST", url: "/v1/preview/training-jobs", payload: { model_id: bobsModel, trajectory_groups: [] } },
      { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: bobsModel, training_data_url: "wandb-artifact:///bob/p/data:v0" } },
      { method: "POST", url: `/v1/preview/models/${bobsModel}/log`, payload: { split: "val", trajectory_groups: [{ trajectories: [{ reward: 1 }] }] } },
      { method: "GET", url: `/v1/preview/models/${bobsModel}/checkpoints` },
      { method: "DELETE", url: `/v1/preview/models/${bobsModel}/checkpoints`, payload: { steps: [1] } },
      { method: "GET", url: `/v1/preview/models/${bobsModel}` },
      { method: "GET", url: `/v1/preview/models/${bobsModel}/checkpoints/0/download?format=merged` },
      { method: "POST", url: `/v1/preview/models/${bobsModel}/checkpoints/import`, payload: { artifact_url: "wandb-artifact:///alice/p/adapter:v0" } },
      { method: "DELETE", url: `/v1/preview/models/${bobsModel}` },
    ] as const;

  it("answers another entity's model id with 404, like an unknown id", async () => {
    for (const route of routes()) {
      const foreign = await t.request(t.keys.alice, route);
      const unknownRoute = JSON.parse(JSON.stringify(route).replaceAll(bobsModel, UNKNOWN).replaceAll(bobsJob, UNKNOWN));
      const unknown = await t.request(t.keys.alice, unknownRoute);
      expect(foreign.statusCode, `${route.method} ${route.url}`).toBe(404);
      expect(foreign.json().detail.replace(bobsModel, "ID").replace(bobsJob, "ID")).toBe(unknown.json().detail.replace(UNKNOWN, "ID"));
    }
  });

  it("answers another entity's id in a body field with 404, and its artifact URL like a missing one", async () => {
    const alicesModel = (await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "mine", base_model: "test/base" } })).json().id;
    await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "data", files: [{ name: "train.jsonl", text: '{"messages":[{"role":"assistant","content":"a"}]}' }] } });
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: alicesModel, training_data_url: "wandb-artifact:///bob/p/data:v0" } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].msg).toBe("artifact 'wandb-artifact:///bob/p/data:v0' was not found; upload it with POST /v1/preview/artifacts or flywheel artifacts upload");
  });

  it("leaves the owner's data intact", async () => {
    const page = await pageCheckpoints(t.store.db, bobsModel, { limit: 10, order: "asc" });
    expect(page.data.map((c) => c.step)).toEqual([1]);
    const job = await t.request(t.keys.bob, { method: "GET", url: `/v1/preview/training-jobs/${bobsJob}` });
    expect(job.json().status).toBe("queued");
    const own = await t.request(t.keys.bob, { method: "GET", url: `/v1/preview/models/${bobsModel}/checkpoints` });
    expect(own.statusCode).toBe(200);
  });
});
