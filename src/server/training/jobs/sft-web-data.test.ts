import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { allEvents, isTerminal, waitForJob } from "../../../testing/training.js";

const row = JSON.stringify({
  messages: [
    { role: "user", content: "Name a color." },
    { role: "assistant", content: "blue" },
  ],
});
const MAX_BYTES = 4096;

/** A local web server with the files the tests fetch; only ever on 127.0.0.1. */
function startDataServer(): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((request, response) => {
    switch (request.url) {
      case "/data/train.jsonl":
        response.writeHead(200, { "content-type": "application/jsonl" }).end(`${Array(6).fill(row).join("\n")}\n`);
        return;
      case "/big-declared.jsonl":
        response.writeHead(200, { "content-length": String(MAX_BYTES * 2) }).end("x".repeat(MAX_BYTES * 2));
        return;
      case "/big-streamed.jsonl":
        // No Content-Length: the limit must cut the stream while it is read.
        response.writeHead(200);
        for (let i = 0; i < 10; i++) response.write(`${row}\n`.repeat(20));
        response.end();
        return;
      case "/slow.jsonl":
        return; // never answers
      default:
        response.writeHead(404).end("not here");
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

/** Issue 14 item 4: `training_data_url` may be an http(s) URL of a train.jsonl, fetched by the worker. */
describe.each(testDialects)("SFT data from a web URL on %s", (dialect) => {
  let t: TestApp;
  let data: { url: string; server: http.Server };
  let modelId: string;
  beforeAll(async () => {
    data = await startDataServer();
    t = await startTrainingApp(dialect, { worker: { remoteData: { maxBytes: MAX_BYTES, timeoutMs: 1500 } } });
    modelId = (await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "web", base_model: TINY_BASE_MODEL } })).json().id;
  });
  afterAll(async () => {
    await t?.close();
    data.server.closeAllConnections();
    await new Promise((resolve) => data.server.close(resolve));
  });

  const createJob = (url: string, config: Record<string, unknown> = { learning_rate: 1e-3 }) =>
    t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: url, config } });

  it("trains on the fetched rows", async () => {
    const created = await createJob(`${data.url}/data/train.jsonl`, { batch_size: 2, learning_rate: 1e-3 });
    expect(created.statusCode, created.body).toBe(200);
    const job = await waitForJob(t, created.json().id, isTerminal, t.keys.alice, 60_000);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    const events = await allEvents(t, created.json().id);
    // 6 rows in batches of 2: three optimizer steps.
    expect(events.filter((event) => event.type === "gradient_step")).toHaveLength(3);
  }, 90_000);

  it.each([
    ["a missing file", "/missing.jsonl", /answered HTTP 404/],
    ["a file over the size limit (Content-Length)", "/big-declared.jsonl", new RegExp(`more than the limit of ${MAX_BYTES}`)],
    ["a file over the size limit (streamed)", "/big-streamed.jsonl", new RegExp(`more than the limit of ${MAX_BYTES} bytes`)],
    ["a server that does not answer in time", "/slow.jsonl", /no answer within 1.5 s/],
  ])(
    "ends with training_failed that says why for %s",
    async (_name, file, message) => {
      const url = `${data.url}${file}`;
      const created = await createJob(url);
      expect(created.statusCode, created.body).toBe(200);
      const job = await waitForJob(t, created.json().id, isTerminal, t.keys.alice, 30_000);
      expect(job.status).toBe("failed");
      expect(job.error_message).toContain(`could not fetch training_data_url ${url}`);
      expect(job.error_message).toMatch(message);
      expect((await allEvents(t, created.json().id)).map((event) => event.type)).toEqual(["training_failed"]);
    },
    30_000,
  );

  it("ends with training_failed when nothing listens at the URL", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const created = await createJob(`http://127.0.0.1:${port}/train.jsonl`);
    const job = await waitForJob(t, created.json().id, isTerminal, t.keys.alice, 30_000);
    expect(job).toMatchObject({ status: "failed" });
    expect(job.error_message).toMatch(/ECONNREFUSED/);
  });

  it("refuses other URL schemes at once with a 422", async () => {
    for (const url of ["file:///etc/passwd", "ftp://127.0.0.1/train.jsonl", "http://user:secret@127.0.0.1/train.jsonl"]) {
      const res = await createJob(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().detail[0].loc).toEqual(["body", "training_data_url"]);
    }
  });
});
