import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../store/db.js";
import { insertManyCalls } from "../testing/big-project.js";
import { type RunningServer, startServer } from "../testing/cli.js";
import { healthLatenciesDuring, p99 } from "../testing/health-latency.js";
import { tinyModel } from "../testing/models.js";
import { createTestDatabase, dropTestDatabase, makeTempDir, testDialects } from "../testing/stores.js";

/**
 * Issue 12 item 1, measured: `/health` answers within 100 ms at p99 while each of the heavy requests
 * the issue names runs, on SQLite and PostgreSQL. The server is a `flywheel serve` process of its
 * own (trusting request templates, default limits), so /health measures its event loop, not this
 * test's; its project holds FLYWHEEL_LOAD_CALLS calls (default 60,000, about 70 MB of
 * /calls/query; the issue's 256k with `FLYWHEEL_LOAD_CALLS=256000`).
 *
 * Each request runs alone while /health is polled every 5 ms (a few hundred samples per request).
 * The bar is 100 ms plus what the machine itself adds: the p99 of /health with no request running,
 * measured for 1.5 s just before each request (a few ms on a quiet machine). Like every
 * `*-under-load` test file, this one runs after all the others, alone (vitest.config.ts): with
 * other test files on the same two cores, the 90 MB trace answers' p99 measured the machine
 * (115–212 ms on PostgreSQL) rather than the server (17 ms alone).
 */
const CALLS = Number(process.env.FLYWHEEL_LOAD_CALLS ?? 60_000);
const MODEL = "fixture/tiny";
const PROJECT = "default/big";
const KEY = "health-under-load-key-0123456789";
const BAR_MS = 100;
interface Answer {
  status: number;
  /** The body's first megabyte. */
  text: string;
  bytes: number;
  /** How often the project id occurs in the body: once per call in a trace query's answer. */
  projectMentions: number;
}

/**
 * The heavy requests' client, on a thread of its own so that reading a 90 MB answer never delays
 * this thread's /health polls. It POSTs with node:http and reads the answer as it streams, keeping
 * only its first megabyte and a count of `"project_id":"default/big"` (once per call in a trace
 * query's answer). A server that refuses a body by its length may answer before reading it, or
 * close the connection under the upload (status 0 and the socket's error code).
 */
const CLIENT_SOURCE = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
const NEEDLE = '"project_id":"default/big"';
parentPort.on("message", ({ url, key, body }) => {
  let done = false;
  const finish = (answer) => { if (!done) { done = true; parentPort.postMessage(answer); } };
  const data = Buffer.from(body);
  const req = http.request(url, { method: "POST", headers: { authorization: "Bearer " + key, "content-type": "application/json", "content-length": data.length } }, (res) => {
    const answer = { status: res.statusCode, text: "", bytes: 0, projectMentions: 0 };
    let tail = "";
    res.setEncoding("utf8");
    res.on("data", (chunk) => {
      answer.bytes += chunk.length;
      if (answer.text.length < 1048576) answer.text += chunk.slice(0, 1048576 - answer.text.length);
      const window = tail + chunk;
      for (let at = window.indexOf(NEEDLE); at >= 0; at = window.indexOf(NEEDLE, at + 1)) answer.projectMentions++;
      tail = window.slice(-(NEEDLE.length - 1));
    });
    res.on("end", () => { req.destroy(); finish(answer); });
  });
  // A server that refuses the body by its length may close the connection under the upload.
  req.on("error", (error) => finish({ status: 0, text: String(error.code || error.message), bytes: 0, projectMentions: 0 }));
  let offset = 0;
  const write = () => {
    while (offset < data.length && !done) {
      const chunk = data.subarray(offset, offset + 65536);
      offset += chunk.length;
      if (!req.write(chunk)) return req.once("drain", write);
    }
    if (offset >= data.length) req.end();
  };
  write();
});`;

const words = (chars: number) =>
  Array.from({ length: Math.ceil(chars / 6) }, (_, i) => ["river", "stone", "light", "quiet"][i % 4])
    .join(" ")
    .slice(0, chars);
const tool = (i: number) => ({ type: "function", function: { name: `tool_${i}`, description: "Looks something up.", parameters: { type: "object", properties: { q: { type: "string" } } } } });
const user = (content: string) => [{ role: "user", content }];

/** The heavy requests: what each sends, and the answer it must get. */
const heavy: { name: string; path: string; body: () => unknown; expect: (answer: Answer) => void }[] = [
  {
    name: "a 20 MB chat message",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, messages: user("x".repeat(20_000_000)) }),
    expect: (a) => expect([413, "0 EPIPE", "0 ECONNRESET"]).toContain(a.status === 413 ? 413 : `0 ${a.text}`),
  },
  {
    name: "200,000 messages",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, messages: Array.from({ length: 200_000 }, () => ({ role: "user", content: "hi" })) }),
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringContaining("FLYWHEEL_MAX_MESSAGES")]),
  },
  {
    name: "10,000 tools",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, messages: user("hi"), tools: Array.from({ length: 10_000 }, (_, i) => tool(i)) }),
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringContaining("FLYWHEEL_MAX_TOOLS")]),
  },
  {
    name: "a prompt at the size limit (990,000 characters)",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, max_tokens: 1, messages: user(words(990_000)) }),
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringMatching(/maximum context length|did not finish rendering and tokenizing/)]),
  },
  {
    name: "10,000 messages (inside the limits)",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, max_tokens: 1, messages: Array.from({ length: 10_000 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message ${i}` })) }),
    // Rendering 10,000 messages may take longer than the template time limit on a slow machine.
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringMatching(/maximum context length|did not finish rendering and tokenizing/)]),
  },
  {
    name: "a JSON schema of 1,000 properties",
    path: "/v1/chat/completions",
    body: () => ({
      model: MODEL,
      max_tokens: 2,
      messages: user("hi"),
      response_format: { type: "json_schema", json_schema: { name: "big", schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`field_${i}`, { type: "integer" }])) } } },
    }),
    expect: (a) => expect(a.status).toBe(200),
  },
  {
    name: "a template loop (request templates trusted)",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, messages: user("hi"), chat_template: "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}" }),
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringContaining("did not finish rendering")]),
  },
  {
    name: "a left-recursive grammar",
    path: "/v1/chat/completions",
    body: () => ({ model: MODEL, messages: user("hi"), structured_outputs: { grammar: "root ::= root root" } }),
    expect: (a) => expect([a.status, a.text]).toEqual([400, expect.stringContaining("Invalid grammar specification")]),
  },
  {
    name: `/calls/stream_query over ${CALLS} calls`,
    path: "/trace/calls/stream_query",
    body: () => ({ project_id: PROJECT }),
    expect: (a) => {
      expect(a.status).toBe(200);
      expect(a.projectMentions).toBe(CALLS);
    },
  },
  {
    // Not the default order: the ids are sorted once, then the rows read by id (not re-sorted per page).
    name: `/calls/stream_query over ${CALLS} calls, sorted by output.answer descending`,
    path: "/trace/calls/stream_query",
    body: () => ({ project_id: PROJECT, sort_by: [{ field: "output.answer", direction: "desc" }] }),
    expect: (a) => {
      expect(a.status).toBe(200);
      expect(a.projectMentions).toBe(CALLS);
      const at = (i: number) => a.text.indexOf(`"c${String(i).padStart(9, "0")}"`);
      expect(at(CALLS - 1)).toBeGreaterThanOrEqual(0);
      expect(at(CALLS - 1)).toBeLessThan(at(CALLS - 2));
    },
  },
  {
    name: `/calls/query over ${CALLS} calls`,
    path: "/trace/calls/query",
    body: () => ({ project_id: PROJECT }),
    expect: (a) => {
      expect([a.status, a.text.slice(0, 10)]).toEqual([200, '{"calls":[']);
      expect(a.projectMentions).toBe(CALLS);
    },
  },
];

describe.each(testDialects)("/health while heavy requests run, on %s", (dialect) => {
  let server: RunningServer;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let idle: number[] = [];

  let client: Worker;
  const post = (route: string, body: string) =>
    new Promise<Answer>((resolve) => {
      client.once("message", resolve);
      client.postMessage({ url: `${server.url}${route}`, key: KEY, body });
    });

  beforeAll(async () => {
    client = new Worker(CLIENT_SOURCE, { eval: true });
    dataDir = makeTempDir("flywheel-health-load-");
    fs.cpSync(tinyModel("qwen2").dir, path.join(dataDir, "models", ...MODEL.split("/")), { recursive: true });
    databaseUrl = dialect === "postgres" ? await createTestDatabase() : undefined;
    const store = await openStore({ dataDir, databaseUrl });
    const started = performance.now();
    await insertManyCalls(store, PROJECT, CALLS);
    await store.close();
    console.log(`${dialect}: ${CALLS} calls inserted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    server = await startServer(["--data-dir", dataDir, "--trust-request-chat-template"], {
      FLYWHEEL_API_KEY: KEY,
      FLYWHEEL_LOG_LEVEL: "warn",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    // A fresh process compiles each path on first use (and loads the model): warm them all once.
    for (const request of heavy) await post(request.path, JSON.stringify(request.name.startsWith("/calls") ? { project_id: PROJECT, limit: 10 } : { model: MODEL, max_tokens: 1, messages: user("hi") }));
    idle = await healthLatenciesDuring(server.url, Promise.resolve(), 2000);
    console.log(`${dialect}: idle /health p99 ${p99(idle).toFixed(1)} ms over ${idle.length} polls`);
  }, 600_000);

  afterAll(async () => {
    await client?.terminate();
    if (server) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(heavy.map((request) => [request.name, request]))(
    "keeps /health under 100 ms at p99 during %s",
    async (_name, request) => {
      const body = JSON.stringify(request.body());
      // What the machine adds right now (its load changes from minute to minute).
      const idleNow = await healthLatenciesDuring(server.url, Promise.resolve(), 1500);
      const started = performance.now();
      const work = post(request.path, body);
      const latencies = await healthLatenciesDuring(server.url, work, 3000);
      const answer = await work;
      const ms = performance.now() - started;
      console.log(
        `${dialect}: ${request.name}: HTTP ${answer.status} after ${ms.toFixed(0)} ms (${answer.bytes} bytes); /health p99 ${p99(latencies).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms over ${latencies.length} polls (idle just before: p99 ${p99(idleNow).toFixed(1)} ms)`,
      );
      request.expect(answer);
      expect(p99(latencies), `health latencies (ms): ${latencies.map((value) => value.toFixed(1)).join(", ")}`).toBeLessThan(BAR_MS + p99(idleNow));
    },
    300_000,
  );
});
