import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";
import { flywheelVersion } from "../../../version.js";

describe("trace service, inference catalogue and image routes", () => {
  let t: TestApp;
  let c: TraceClient;
  beforeAll(async () => {
    t = await startTestApp("sqlite", { baseModels: ["org/tiny-chat", "org/other"] });
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });
  const anonymous = (url: string) => t.app.inject({ method: "GET", url: `/trace${url}` });

  it("answers health, server info, version and geolocation without a key", async () => {
    expect((await anonymous("/health")).json()).toEqual({ status: "ok" });
    const info = (await anonymous("/server_info")).json();
    expect(info).toEqual({ min_required_weave_python_version: "0.0.1", trace_server_version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const version = await anonymous("/version");
    expect(version.headers["content-type"]).toMatch(/^application\/json/);
    expect(version.json()).toBe(flywheelVersion);
    expect((await anonymous("/geolocate?ip=203.0.113.7")).json()).toEqual({ ip: "203.0.113.7", location: null, allowed: true });
  });

  it("maps project ids to themselves, for the caller's entity only", async () => {
    const res = await c.post("/service/projects_info", { project_ids: ["alice/a", "alice/b"] });
    expect(res.json()).toEqual([
      { external_project_id: "alice/a", internal_project_id: "alice/a" },
      { external_project_id: "alice/b", internal_project_id: "alice/b" },
    ]);
    expect((await c.post("/service/projects_info", { project_ids: ["bob/a"] })).statusCode).toBe(404);
    expect((await c.post("/service/projects_info", { project_ids: ["no-slash"] })).statusCode).toBe(400);
    const noKey = await t.app.inject({ method: "POST", url: "/trace/service/projects_info", payload: { project_ids: ["alice/a"] } });
    expect(noKey.statusCode).toBe(401);
  });

  it("lists the served models and the machine in the inference catalogue routes, to a key only", async () => {
    for (const url of ["/inference/router/openrouter/models", "/inference/analysis/artificialanalysis/models", "/inference/coreweave/v2/hardware"]) {
      expect((await anonymous(url)).statusCode, url).toBe(401);
    }
    const keyed = async (url: string) => (await c.get(url)).json();
    const router = await keyed("/inference/router/openrouter/models");
    expect(router.data.map((model: { id: string }) => model.id)).toEqual(t.app.services.catalog.list().map((entry) => entry.id));
    expect(router.data.map((model: { id: string }) => model.id)).toEqual(expect.arrayContaining(["org/other", "org/tiny-chat"]));
    expect(router.data[0]).toMatchObject({ input_modalities: ["text"], output_modalities: ["text"], pricing: { prompt: "0", completion: "0" } });
    expect(router.data[0].supported_sampling_parameters).toContain("temperature");
    const analysis = await keyed("/inference/analysis/artificialanalysis/models");
    expect(analysis.data.map((model: { id: string }) => model.id)).toEqual(router.data.map((model: { id: string }) => model.id));
    expect(analysis.data[0]).toMatchObject({ model_type: "qwen2" });
    const hardware = await keyed("/inference/coreweave/v2/hardware");
    expect(hardware.data[0]).toMatchObject({ cpu: { count: expect.any(Number) }, memory_bytes: expect.any(Number), accelerators: [] });
  });

  it("answers image generation with a clear 400, after validating the request", async () => {
    const res = await c.post("/image/create", { project_id: "alice/img", inputs: { model: "dall-e-3", prompt: "a cat" } });
    expect(res.statusCode).toBe(400);
    expect(res.json().reason).toMatch(/no upstream image provider/);
    expect((await c.post("/image/create", { project_id: "alice/img", inputs: { prompt: "a cat" } })).statusCode).toBe(422);
    expect((await c.post("/image/create", { project_id: "bob/img", inputs: { model: "m", prompt: "p" } })).statusCode).toBe(404);
  });

  it("keeps the app's own service routes and documents the trace routes", async () => {
    expect((await t.app.inject({ method: "GET", url: "/version" })).json()).toEqual({ version: flywheelVersion });
    const paths = Object.keys((await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths);
    expect(paths).toEqual(expect.arrayContaining(["/trace/obj/create", "/trace/objs/{object_id}/versions/{digest}/tags", "/trace/v2/{entity}/{project}/datasets", "/trace/annotation_queues/{queue_id}/items/query"]));
  });
});
