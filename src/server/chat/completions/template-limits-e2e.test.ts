import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../../testing/chat-server.js";
import { healthLatenciesDuring, p99 } from "../../../testing/health-latency.js";
import { tinyModel } from "../../../testing/models.js";

const messages = [{ role: "user", content: "Hi there" }];

/**
 * Issue 12 item 1: a request's own chat template is refused unless the operator trusts them, and a
 * trusted one renders on a thread of its own within a time, memory and size limit, ending in a
 * clear 400 while /health keeps answering at once.
 */
describe("request chat templates: trust and limits", () => {
  let trusting: ChatServer;
  let untrusting: ChatServer;
  beforeAll(async () => {
    const servedModels = { "test/tiny": tinyModel("qwen2").dir };
    trusting = await startChatServer("sqlite", {
      servedModels,
      env: { FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE: "1", FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS: "1500", FLYWHEEL_MAX_PROMPT_CHARS: "100000" },
    });
    untrusting = await startChatServer("sqlite", { servedModels });
  });
  afterAll(async () => {
    await trusting?.close();
    await untrusting?.close();
  });

  const post = (server: ChatServer, fields: Record<string, unknown>) => server.post({ model: "test/tiny", messages, max_tokens: 2, ...fields });

  it("refuses a request's template (and only that) unless the server trusts them, with vLLM's text", async () => {
    const refused = await post(untrusting, { chat_template: "{{ messages[0].content }}" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: {
        message: "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    });
    expect((await post(untrusting, {})).status).toBe(200);
    expect((await post(trusting, { chat_template: "{{ messages[0].content }}" })).status).toBe(200);
  });

  it.each([
    ["a hundred-million-step loop", "{% for i in range(100000000) %}x{% endfor %}", /Range too big\. The sandbox blocks ranges larger than MAX_RANGE \(100000\)/],
    ["nested loops with no output", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", /The prompt did not finish rendering and tokenizing within 1500 ms \(FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS\)/],
    ["an output past the prompt limit", "{% for i in range(200) %}{{ messages[0].content }}{% endfor %}", /rendered 200000 characters, more than this server's limit of 100000/],
    ["a string doubling without end", "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}", /could not be rendered: Invalid string length|more than this server.s 256 MiB/],
  ])("answers %s with a clear 400 while /health stays under 100 ms at p99", async (_name, template, message) => {
    const request = post(trusting, { chat_template: template, messages: [{ role: "user", content: "y".repeat(1000) }] });
    const latencies = await healthLatenciesDuring(trusting.baseURL.replace(/\/v1$/, ""), request);
    const res = await request;
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error.type).toBe("BadRequestError");
    expect(body.error.message).toMatch(message);
    expect(latencies.length).toBeGreaterThan(0);
    expect(p99(latencies), `health latencies (ms): ${latencies.map((ms) => ms.toFixed(1)).join(", ")}`).toBeLessThan(100);
    // The pool replaced any thread it stopped: the next render works.
    expect((await post(trusting, { chat_template: "{{ messages[0].content }}" })).status).toBe(200);
  });
});
