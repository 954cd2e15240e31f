import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../testing/app.js";

/** HTTP as openai-python sends it: `Content-Type: application/json` on every request that may carry a body. */
describe("HTTP semantics with a JSON content type and no body", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite");
  });
  afterAll(async () => {
    await t.close();
  });

  const json = { "content-type": "application/json" };

  it("treats a body-less DELETE of a model as a request without a body", async () => {
    const created = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "to-delete", base_model: "test/base" } });
    expect(created.statusCode).toBe(200);
    const id = created.json().id as string;
    const deleted = await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${id}`, headers: json });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toMatchObject({ model_id: id, deleted_run: true });
    const whitespace = await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${id}`, headers: json, payload: "  \n" });
    expect(whitespace.statusCode).toBe(404);
    expect(whitespace.json()).toEqual({ detail: `Model '${id}' not found` });
  });

  it("treats a body-less POST to a route without a body (cancel) the same way", async () => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/training-jobs/00000000-0000-4000-8000-000000000000/cancel", headers: json });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toMatch(/not found/);
  });

  it("still answers 422 'Field required' where the route needs a body", async () => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", headers: json });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ detail: [{ loc: ["body"], msg: "Field required", type: "missing" }] });
    const trace = await t.request(t.keys.alice, { method: "POST", url: "/trace/calls/stream_query", headers: json, payload: "" });
    expect(trace.statusCode).toBe(422);
    expect(trace.json().detail[0]).toMatchObject({ loc: ["body"], type: "missing" });
  });

  it("answers a wrong method with 405 and Allow whatever the content type or body", async () => {
    const cases: { headers: Record<string, string>; payload?: string }[] = [
      { headers: json },
      { headers: json, payload: "{not json" },
      { headers: json, payload: '{"project":"p"}' },
      { headers: { "content-type": "text/plain" }, payload: "hello" },
      { headers: { "content-type": "application/x-protobuf" }, payload: "\u0000\u0001" },
      { headers: {} },
    ];
    for (const { headers, payload } of cases) {
      const label = `${JSON.stringify(headers)} ${payload ?? "(none)"}`;
      const preview = await t.request(t.keys.alice, { method: "PUT", url: "/v1/preview/models", headers, ...(payload !== undefined ? { payload } : {}) });
      expect(preview.statusCode, label).toBe(405);
      expect(preview.headers.allow, label).toBe("GET, POST");
      expect(preview.json(), label).toEqual({ detail: "Method Not Allowed" });
      const chat = await t.request(t.keys.alice, { method: "PUT", url: "/v1/chat/completions", headers, ...(payload !== undefined ? { payload } : {}) });
      expect(chat.statusCode, label).toBe(405);
      expect(chat.headers.allow, label).toBe("POST");
      expect(chat.json().error, label).toMatchObject({ message: "Method Not Allowed", code: 405 });
      const trace = await t.request(t.keys.alice, { method: "DELETE", url: "/trace/call/start", headers, ...(payload !== undefined ? { payload } : {}) });
      expect(trace.statusCode, label).toBe(405);
      expect(trace.headers.allow, label).toBe("POST");
      expect(trace.json(), label).toEqual({ reason: "Method Not Allowed" });
    }
  });

  it("answers 401 in each surface's documented shape", async () => {
    const noKey = { "content-type": "application/json" };
    const chat = await t.app.inject({ method: "POST", url: "/v1/chat/completions", headers: noKey, payload: "{}" });
    expect(chat.statusCode).toBe(401);
    expect(chat.json()).toEqual({ error: { message: expect.stringMatching(/Missing API key/), type: "AuthenticationError", param: null, code: 401 } });
    const models = await t.app.inject({ method: "GET", url: "/v1/models", headers: { authorization: "Bearer fw_wrong" } });
    expect(models.statusCode).toBe(401);
    expect(models.json().error).toMatchObject({ message: "Invalid or revoked API key", type: "AuthenticationError", code: 401 });
    const preview = await t.app.inject({ method: "DELETE", url: "/v1/preview/models/00000000-0000-4000-8000-000000000000", headers: noKey });
    expect(preview.statusCode).toBe(401);
    expect(preview.json()).toEqual({ detail: expect.stringMatching(/Missing API key/) });
    expect(preview.headers["www-authenticate"]).toBe("Bearer");
    const trace = await t.app.inject({ method: "POST", url: "/trace/calls/stream_query", headers: noKey, payload: "{}" });
    expect(trace.statusCode).toBe(401);
    expect(trace.json()).toEqual({ reason: expect.stringMatching(/Missing API key/) });
    expect(trace.headers["www-authenticate"]).toMatch(/^Basic/);
    const otel = await t.app.inject({ method: "POST", url: "/trace/agents/otel/v1/traces", headers: { "content-type": "application/x-protobuf" }, payload: "" });
    expect(otel.statusCode).toBe(401);
    expect(otel.json()).toEqual({ reason: expect.stringMatching(/Missing API key/) });
  });
});
