import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";

/**
 * A small local HTTP server that speaks OpenAI's `POST /v1/images/generations`. It stands in for
 * an external image provider only (no image model runs on this machine); everything on
 * Flywheel's side — configuration, forwarding, error mapping, the recorded call — is the real code.
 */
interface FakeProvider {
  baseUrl: string;
  received: { authorization: string | undefined; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

const PROVIDER_KEY = "sk-image-provider";
const PIXEL = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");

async function startFakeProvider(): Promise<FakeProvider> {
  const received: FakeProvider["received"] = [];
  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "POST" || req.url !== "/v1/images/generations") return answer(404, { error: { message: `no route ${req.url}` } });
      if (req.headers.authorization !== `Bearer ${PROVIDER_KEY}`) return answer(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ authorization: req.headers.authorization, body });
      if (String(body.prompt).includes("forbidden")) {
        return answer(400, { error: { message: "Your request was rejected as a result of our safety system.", type: "image_generation_user_error", code: "content_policy_violation" } });
      }
      if (body.model === "overloaded") return answer(503, { error: { message: "The engine is currently overloaded" } });
      const n = typeof body.n === "number" ? body.n : 1;
      answer(200, {
        created: 1_700_000_000,
        data: Array.from({ length: n }, (_, index) => ({ b64_json: PIXEL, revised_prompt: `${body.prompt} #${index}` })),
        usage: { input_tokens: 12, output_tokens: 272 * n, total_tokens: 12 + 272 * n },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A base URL where nothing listens: a port that was just free. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

describe.each(testDialects)("image generation through an upstream provider on %s", (dialect) => {
  let provider: FakeProvider;
  let t: TestApp;
  let alice: TraceClient;
  let bob: TraceClient;
  beforeAll(async () => {
    provider = await startFakeProvider();
    t = await startTestApp(dialect, { env: { FLYWHEEL_IMAGE_UPSTREAM: provider.baseUrl, FLYWHEEL_IMAGE_UPSTREAM_API_KEY: PROVIDER_KEY } });
    alice = traceClient(t, t.keys.alice);
    bob = traceClient(t, t.keys.bob);
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  it("answers the provider's images and records the generation as a call", async () => {
    const P = "alice/images";
    const res = await alice.json("/image/create", { project_id: P, inputs: { model: "gpt-image-1", prompt: "a red fox", n: 2 } });
    expect(provider.received.at(-1)).toEqual({ authorization: `Bearer ${PROVIDER_KEY}`, body: { model: "gpt-image-1", prompt: "a red fox", n: 2 } });
    expect(res.response.data).toEqual([
      { b64_json: PIXEL, revised_prompt: "a red fox #0" },
      { b64_json: PIXEL, revised_prompt: "a red fox #1" },
    ]);
    expect(res.response.usage).toEqual({ input_tokens: 12, output_tokens: 544, total_tokens: 556 });
    expect(res.weave_call_id).toEqual(expect.any(String));

    const calls = await alice.lines("/calls/stream_query", { project_id: P });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      id: res.weave_call_id,
      trace_id: res.weave_call_id,
      parent_id: null,
      op_name: "weave.image_generation_create",
      inputs: { model: "gpt-image-1", prompt: "a red fox", n: 2 },
      output: res.response,
      exception: null,
      summary: { usage: { "gpt-image-1": { input_tokens: 12, output_tokens: 544, total_tokens: 556 } } },
    });
    expect(calls[0].ended_at).toEqual(expect.any(String));
  });

  it("leaves n to the provider when not given, recording it as null", async () => {
    const P = "alice/images-default-n";
    const res = await alice.json("/image/create", { project_id: P, inputs: { model: "dall-e-2", prompt: "a boat" } });
    expect(provider.received.at(-1)?.body).toEqual({ model: "dall-e-2", prompt: "a boat" });
    expect(res.response.data).toHaveLength(1);
    const [call] = await alice.lines("/calls/stream_query", { project_id: P, filter: { call_ids: [res.weave_call_id] } });
    expect(call.inputs).toEqual({ model: "dall-e-2", prompt: "a boat", n: null });
  });

  it("records nothing when track_llm_call is false", async () => {
    const P = "alice/images-untracked";
    const res = await alice.json("/image/create", { project_id: P, inputs: { model: "dall-e-2", prompt: "a kite", n: 1 }, track_llm_call: false });
    expect(res).toEqual({ response: expect.objectContaining({ created: 1_700_000_000 }) });
    expect(await alice.lines("/calls/stream_query", { project_id: P })).toEqual([]);
  });

  it("passes a provider refusal through as a 400 and a provider fault as a 502, recording neither", async () => {
    const P = "alice/images-refused";
    const refused = await alice.post("/image/create", { project_id: P, inputs: { model: "gpt-image-1", prompt: "something forbidden" } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ reason: "Your request was rejected as a result of our safety system." });
    const failed = await alice.post("/image/create", { project_id: P, inputs: { model: "overloaded", prompt: "a cat" } });
    expect(failed.statusCode).toBe(502);
    expect(failed.json().reason).toBe(`The image provider at ${provider.baseUrl} failed (HTTP 503): The engine is currently overloaded`);
    expect(await alice.lines("/calls/stream_query", { project_id: P })).toEqual([]);
    expect((await alice.post("/image/create", { project_id: P, inputs: { model: "m", prompt: "p", n: 0 } })).statusCode).toBe(422);
  });

  it("keeps tenants apart and needs a key", async () => {
    const other = await bob.post("/image/create", { project_id: "alice/images", inputs: { model: "dall-e-2", prompt: "a fox" } });
    expect(other.statusCode).toBe(404);
    const before = provider.received.length;
    const own = await bob.json("/image/create", { project_id: "bob/images", inputs: { model: "dall-e-2", prompt: "a fox" } });
    expect(provider.received.length).toBe(before + 1);
    expect((await alice.post("/calls/stream_query", { project_id: "bob/images" })).statusCode).toBe(404);
    expect((await bob.lines("/calls/stream_query", { project_id: "bob/images" })).map((call) => call.id)).toEqual([own.weave_call_id]);
    const anonymous = await t.app.inject({ method: "POST", url: "/trace/image/create", payload: { project_id: "alice/images", inputs: { model: "m", prompt: "p" } } });
    expect(anonymous.statusCode).toBe(401);
  });

  it("answers 502 when the provider cannot be reached", async () => {
    const unreachable = await startTestApp(dialect, { env: { FLYWHEEL_IMAGE_UPSTREAM: await closedPortUrl() } });
    try {
      const res = await traceClient(unreachable, unreachable.keys.alice).post("/image/create", { project_id: "alice/images", inputs: { model: "dall-e-2", prompt: "a fox" } });
      expect(res.statusCode).toBe(502);
      expect(res.json().reason).toMatch(/^The image provider at http:\/\/127\.0\.0\.1:\d+\/v1 cannot be reached: .*ECONNREFUSED/);
    } finally {
      await unreachable.close();
    }
  });
});
