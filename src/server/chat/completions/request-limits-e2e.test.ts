import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_MODEL, type ExampleServer, startExampleServer } from "../../../testing/examples.js";
import { healthLatenciesDuring, p99 } from "../../../testing/health-latency.js";

/**
 * A POST that announces `length` bytes but sends only the first kilobyte of `body`, and waits for
 * the answer: a server that refuses by Content-Length answers without reading the rest.
 */
function postAnnouncingOnly(url: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text });
      });
    });
    req.on("error", reject);
    req.write(body.slice(0, 1024));
  });
}

const tool = (i: number) => ({ type: "function", function: { name: `tool_${i}`, description: "Looks something up.", parameters: { type: "object", properties: { q: { type: "string" } } } } });

/**
 * Issue 12 item 1 (big inputs): a request past the size limits (FLYWHEEL_MAX_PROMPT_CHARS,
 * FLYWHEEL_MAX_MESSAGES, FLYWHEEL_MAX_TOOLS, defaults here) is a 400 that names the limit, found
 * before the schema, the model or the template do any work, while /health keeps answering. The
 * server is a process of its own, so /health measures its event loop, not this test's.
 */
describe("chat request size limits", () => {
  let server: ExampleServer;
  const chat = (body: string) => fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body });
  beforeAll(async () => {
    server = await startExampleServer();
    // Warm the refusal path (a fresh process compiles it on first use), so the test measures the steady state.
    const warmUp = JSON.stringify({ model: EXAMPLE_MODEL, messages: [{ role: "user", content: "x".repeat(1_100_000) }] });
    for (let i = 0; i < 3; i++) await (await chat(warmUp)).text();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ["a 2 MB message", () => ({ messages: [{ role: "user", content: "x".repeat(2_000_000) }] }), /hold more than 1000000 characters.*FLYWHEEL_MAX_PROMPT_CHARS/, "messages"],
    ["200,000 messages", () => ({ messages: Array.from({ length: 200_000 }, () => ({ role: "user", content: "hi" })) }), /has 200000 messages, more than this server's limit of 10000 \(FLYWHEEL_MAX_MESSAGES\)/, "messages"],
    ["10,000 tools", () => ({ messages: [{ role: "user", content: "hi" }], tools: Array.from({ length: 10_000 }, (_, i) => tool(i)) }), /has 10000 tools, more than this server's limit of 1000 \(FLYWHEEL_MAX_TOOLS\)/, "tools"],
  ])("answers %s with a quick 400 while /health stays under 100 ms at p99", async (_name, fields, message, param) => {
    const body = JSON.stringify({ model: EXAMPLE_MODEL, max_tokens: 2, ...fields() });
    const started = performance.now();
    const request = chat(body).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as { error: { message: string; param: string | null; type: string } },
      ms: performance.now() - started,
    }));
    const latencies = await healthLatenciesDuring(server.url, request);
    const res = await request;
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ type: "BadRequestError", param, message: expect.stringMatching(message) });
    expect(res.ms).toBeLessThan(5_000);
    console.log(`${_name}: 400 after ${res.ms.toFixed(0)} ms; /health p99 ${p99(latencies).toFixed(1)} ms over ${latencies.length} polls`);
    expect(p99(latencies), `health latencies (ms): ${latencies.map((ms) => ms.toFixed(1)).join(", ")}`).toBeLessThan(100);
  });

  it("refuses a 20 MB body (past 6 bytes per allowed prompt character and 1 MiB) from its length alone, with a 413", async () => {
    const body = JSON.stringify({ model: EXAMPLE_MODEL, messages: [{ role: "user", content: "x".repeat(20_000_000) }] });
    const started = performance.now();
    const res = await postAnnouncingOnly(`${server.url}/v1/chat/completions`, server.key, body);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ error: { message: "Request body too large", code: 413 } });
    console.log(`a 20 MB body: 413 after ${(performance.now() - started).toFixed(0)} ms`);
  });

  it("still serves requests inside the limits", async () => {
    const res = await chat(JSON.stringify({ model: EXAMPLE_MODEL, max_tokens: 2, messages: [{ role: "user", content: "hi" }], tools: [tool(1)] }));
    expect(res.status).toBe(200);
  });
});
