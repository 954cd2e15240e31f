import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModel } from "../../../store/models.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";

/**
 * The route's behaviour up to the engine: schema failures, chat rules, model resolution and
 * tenancy, answered the same way whether streaming or not. Generation itself is tested end to
 * end once an engine is wired into the app.
 */
describe.each(testDialects)("POST /v1/chat/completions before generation on %s", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(dialect, { baseModels: ["test/base"] });
    await createModel(t.store.db, { entity: "bob", project: "proj", name: "agent", base_model: "test/base" });
    await createModel(t.store.db, { entity: "alice", project: "proj", name: "mine", base_model: "test/base" });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (payload: unknown, url = "/v1/chat/completions", key = t.keys.alice) => t.request(key, { method: "POST", url, payload: payload as Record<string, unknown> });
  const user = [{ role: "user", content: "hi" }];

  it("answers schema failures with 422 detail items, streaming or not", async () => {
    for (const stream of [false, true]) {
      const res = await post({ model: "test/base", messages: [{ content: "no role" }], n: 1.5, stream });
      expect(res.statusCode).toBe(422);
      expect(res.headers["content-type"]).toMatch(/application\/json/);
      expect(res.json().detail.map((item: { loc: unknown[] }) => item.loc)).toEqual([
        ["body", "messages", 0, "role"],
        ["body", "n"],
      ]);
    }
  });

  it("answers chat rules with vLLM's 400 envelope before any stream starts", async () => {
    const res = await post({ model: "test/base", messages: user, stream: true, prompt_logprobs: 2 });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/application\/json/);
    expect(res.json()).toEqual({ error: { message: "`prompt_logprobs` are not available when `stream=True`.", type: "BadRequestError", param: "prompt_logprobs", code: 400 } });
    const options = await post({ model: "test/base", messages: user, stream_options: { include_usage: true } });
    expect(options.json().error).toMatchObject({ param: "stream_options", code: 400 });
  });

  it("checks request rules before the model, like vLLM", async () => {
    const res = await post({ model: "nope/missing", messages: user, continue_final_message: true });
    expect(res.statusCode).toBe(400);
  });

  it("answers unknown models and other entities' models with the same 404", async () => {
    for (const model of ["nope/missing", "wandb-artifact:///bob/proj/agent", "agent@0", "wandb-artifact:///alice/proj/mine:step3"]) {
      const res = await post({ model, messages: user });
      expect(res.statusCode, model).toBe(404);
      expect(res.json()).toEqual({ error: { message: `The model \`${model}\` does not exist.`, type: "NotFoundError", param: "model", code: 404 } });
    }
  });

  it("answers 503 for a served model while no engine is configured, on both paths", async () => {
    for (const url of ["/v1/chat/completions", "/v1/chat/completions/"]) {
      // Named models only: the bundled flywheel/tiny-chat is served too, so an omitted model is ambiguous (400).
      for (const model of ["test/base", "wandb-artifact:///alice/proj/mine", "mine@0"]) {
        const res = await post({ model, messages: user }, url);
        expect(res.statusCode, `${url} ${model}`).toBe(503);
        expect(res.json().error).toMatchObject({ type: "ServiceUnavailableError", code: 503 });
      }
    }
  });

  it("requires a key and JSON, in the OpenAI error shape", async () => {
    const noKey = await t.app.inject({ method: "POST", url: "/v1/chat/completions", payload: { messages: user } });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json().error).toMatchObject({ type: "AuthenticationError", code: 401 });
    const text = await t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: "hi", headers: { "content-type": "text/plain" } });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe(415);
  });

  it("never answers arbitrary bodies with a 500", async () => {
    const bodies = ["null", "[]", '"x"', "1", '{"messages": null}', '{"messages": [1]}', '{"messages": [{"role": "user", "content": {"a": 1}}]}', '{"messages": [], "tools": "x"}', '{"__proto__": {"a": 1}, "messages": []}'];
    for (const payload of bodies) {
      const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload, headers: { "content-type": "application/json" } });
      expect(res.statusCode, payload).toBeLessThan(500);
      expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
    }
  });

  it("documents the request schema in /openapi.json", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    const operation = doc.paths["/v1/chat/completions"].post;
    const schema = operation.requestBody.content["application/json"].schema;
    expect(schema.required).toEqual(["messages"]);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(["messages", "model", "logprobs", "top_logprobs", "structured_outputs", "repetition_detection", "return_token_ids"]));
  });

  it("documents the response schema in /openapi.json", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    const schema = doc.paths["/v1/chat/completions"].post.responses["200"].content["application/json"].schema;
    expect(schema.properties.object).toMatchObject({ const: "chat.completion" });
    expect(Object.keys(schema.properties.choices.items.properties)).toEqual(["index", "message", "logprobs", "finish_reason", "stop_reason", "token_ids"]);
  });

  it("gives the official OpenAI SDK errors it understands", async () => {
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const address = t.app.server.address() as { port: number };
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${address.port}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: "nope/missing", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining("does not exist"),
    });
    const badRequest = await client.chat.completions.create({ model: "test/base", messages: [{ role: "user", content: "hi" }], top_logprobs: 3 }).catch((error: unknown) => error);
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRequest as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("top_logprobs");
  });
});
