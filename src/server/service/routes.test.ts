import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { flywheelVersion } from "../../version.js";

describe("service routes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite", { baseModels: ["org/served"] });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers health, version and server info without a key", async () => {
    for (const url of ["/health", "/v1/health"]) {
      const res = await t.app.inject({ method: "GET", url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ok" });
    }
    expect((await t.app.inject({ method: "GET", url: "/version" })).json()).toEqual({ version: flywheelVersion });
    expect((await t.app.inject({ method: "GET", url: "/server_info" })).statusCode).toBe(401);
    const info = (await t.request(t.keys.alice, { method: "GET", url: "/server_info" })).json();
    expect(info).toMatchObject({ name: "flywheel", version: flywheelVersion, database: "sqlite" });
    expect(info.base_models).toContain("org/served");
  });

  it("documents the routes with the schemas that validate them", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    expect(doc.openapi).toBe("3.1.0");
    const create = doc.paths["/v1/preview/models"].post;
    const schema = create.requestBody.content["application/json"].schema;
    expect(schema.required).toEqual(expect.arrayContaining(["project", "name", "base_model"]));
    expect(schema.properties.return_existing.default).toBe(false);
    const list = doc.paths["/v1/preview/models/{model_id}/checkpoints"].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit).toMatchObject({ in: "query", required: false });
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(list.parameters.find((p: { name: string }) => p.name === "model_id")).toMatchObject({ in: "path", required: true });
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/health", "/v1/models", "/v1/preview/models/{model_id}"]));
  });
});
