import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCheckpoint, pageCheckpoints } from "../store/checkpoints.js";
import { startTestApp, type TestApp } from "../testing/app.js";
import { testDialects } from "../testing/stores.js";

/**
 * Every route that takes an id answers another entity's id exactly as an unknown one (404), and
 * leaves the other entity's data untouched. Add each new id-taking route here.
 */
describe.each(testDialects)("tenant isolation on %s", (dialect) => {
  let t: TestApp;
  let bobsModel: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    const res = await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "secret", base_model: "test/base" } });
    bobsModel = res.json().id;
    await insertCheckpoint(t.store.db, { modelId: bobsModel, step: 1, files: null });
  });
  afterAll(async () => {
    await t.close();
  });

  const routes = () =>
    [
      { method: "GET", url: `/v1/preview/models/${bobsModel}/checkpoints` },
      { method: "DELETE", url: `/v1/preview/models/${bobsModel}/checkpoints`, payload: { steps: [1] } },
      { method: "DELETE", url: `/v1/preview/models/${bobsModel}` },
    ] as const;

  it("answers another entity's model id with 404, like an unknown id", async () => {
    for (const route of routes()) {
      const foreign = await t.request(t.keys.alice, route);
      const unknown = await t.request(t.keys.alice, { ...route, url: route.url.replace(bobsModel, "00000000-0000-4000-8000-000000000000") });
      expect(foreign.statusCode, `${route.method} ${route.url}`).toBe(404);
      expect(foreign.json().detail.replace(bobsModel, "ID")).toBe(unknown.json().detail.replace("00000000-0000-4000-8000-000000000000", "ID"));
    }
  });

  it("leaves the owner's data intact", async () => {
    const page = await pageCheckpoints(t.store.db, bobsModel, { limit: 10, order: "asc" });
    expect(page.data.map((c) => c.step)).toEqual([1]);
    const own = await t.request(t.keys.bob, { method: "GET", url: `/v1/preview/models/${bobsModel}/checkpoints` });
    expect(own.statusCode).toBe(200);
  });
});
