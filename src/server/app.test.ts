import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../testing/app.js";

describe("HTTP error shapes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite", { env: { FLYWHEEL_BODY_LIMIT_MB: "1" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (payload: string, contentType = "application/json") => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload, headers: { "content-type": contentType } });

  it("answers malformed JSON with a 422 detail", async () => {
    const res = await post("{not json");
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
  });

  it("answers a wrong content type with 415 JSON", async () => {
    const res = await post("project=p", "application/x-www-form-urlencoded");
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ detail: "Unsupported Media Type: Only 'application/json' is allowed" });
  });

  it("answers a body over the limit with 413 JSON", async () => {
    const res = await post(JSON.stringify({ project: "p", name: "n", base_model: "x".repeat(2 * 1024 * 1024) }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ detail: "Request body too large" });
  });

  it("answers an unknown route with 404 and a wrong method with 405", async () => {
    const missing = await t.request(t.keys.alice, { method: "GET", url: "/v1/nothing-here" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: "Not Found" });
    const wrongMethod = await t.request(t.keys.alice, { method: "PUT", url: "/v1/preview/models" });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe("GET, POST");
    expect(wrongMethod.json()).toEqual({ detail: "Method Not Allowed" });
    const wrongOnParam = await t.request(t.keys.alice, { method: "PATCH", url: "/v1/preview/models/00000000-0000-4000-8000-000000000000/checkpoints" });
    expect(wrongOnParam.statusCode).toBe(405);
    expect(wrongOnParam.headers.allow).toBe("GET, DELETE");
  });

  it("requires a live bearer key on /v1 routes but not on health", async () => {
    expect((await t.app.inject({ method: "GET", url: "/v1/health" })).statusCode).toBe(200);
    const none = await t.app.inject({ method: "GET", url: "/v1/models" });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.message).toMatch(/Missing API key/);
    const wrong = await t.app.inject({ method: "GET", url: "/v1/preview/models/00000000-0000-4000-8000-000000000000/checkpoints", headers: { authorization: "Bearer fw_nope" } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ detail: "Invalid or revoked API key" });
    const basic = await t.app.inject({ method: "GET", url: "/v1/models", headers: { authorization: `Basic ${Buffer.from(`api:${t.keys.alice}`).toString("base64")}` } });
    expect(basic.statusCode).toBe(401);
  });

  it("never answers arbitrary bodies with a 500", async () => {
    const bodies = ["null", "[]", '"text"', "42", "true", '{"project":null}', '{"project":1,"name":[],"base_model":{}}', '{"__proto__":{"x":1}}', "{}".padEnd(5000, " "), '{"steps":"all"}'];
    const routes = [
      ["POST", "/v1/preview/models"],
      ["DELETE", "/v1/preview/models/00000000-0000-4000-8000-000000000000"],
      ["DELETE", "/v1/preview/models/not-a-uuid/checkpoints"],
      ["GET", "/v1/preview/models/00000000-0000-4000-8000-000000000000/checkpoints?limit=abc&order=sideways&after="],
    ] as const;
    for (const [method, url] of routes) {
      for (const payload of bodies) {
        const res = await t.request(t.keys.alice, { method, url, payload, headers: { "content-type": "application/json" } });
        expect(res.statusCode, `${method} ${url} ${payload}`).toBeLessThan(500);
        expect(res.headers["content-type"]).toMatch(/application\/json/);
        expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
      }
    }
  });
});
