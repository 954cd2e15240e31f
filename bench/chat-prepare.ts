/**
 * What the chat route costs before the engine runs, and how long it holds the event loop:
 *
 * - small requests: the time from the server receiving a small chat request to the engine call
 *   (auth, schema, rules, model, template, tokenization), median and p90 over BENCH_REQUESTS
 *   sequential requests, and the server's event-loop delay meanwhile;
 * - one prompt of BENCH_BIG_CHARS characters (inside the default limits): the same stage, and the
 *   longest the event loop was blocked while it was prepared.
 *
 *   npx tsx bench/chat-prepare.ts          # BENCH_REQUESTS=300 BENCH_BIG_CHARS=200000
 *
 * The client runs in a worker thread, so its own work never delays the server's event loop. The
 * model is a small random qwen2-shaped checkpoint under bench/.cache/ (generation is one token).
 * Not a test: numbers depend on the machine and its load.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { openServices } from "../src/cli/open-services.js";
import { loadConfig } from "../src/config.js";
import type { InferenceEngine } from "../src/engine/api.js";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { buildApp } from "../src/server/app.js";
import { createApiKey } from "../src/store/keys.js";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const BIG_CHARS = Number(process.env.BENCH_BIG_CHARS ?? 200_000);

const modelId = "prepare-qwen2-h64-l1-p256k";
const modelDir = path.join(path.dirname(fileURLToPath(import.meta.url)), ".cache", modelId);
if (!fs.existsSync(path.join(modelDir, "config.json"))) makeTinyModel(modelDir, { architecture: "qwen2", seed: 5, hiddenSize: 64, numLayers: 1, numHeads: 4, numKvHeads: 2, intermediateSize: 128, maxPositionEmbeddings: 1 << 18 });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-bench-prepare-"));
const config = loadConfig({ "data-dir": dataDir }, { FLYWHEEL_MODELS: modelDir, FLYWHEEL_PREFIX_CACHE_MB: "0", FLYWHEEL_LOG_LEVEL: "silent" });
const services = await openServices(config);
const key = (await createApiKey(services.store.db, "bench")).key;
const engine: InferenceEngine = await services.engineRegistry.get(modelId);

const now = () => performance.timeOrigin + performance.now();
const marks = { received: 0, engineCalled: 0 };
/** The real engine, noting when the route calls it; the big prompt is answered without running it. */
const timedEngine: InferenceEngine = {
  info: engine.info,
  tokenizer: engine.tokenizer,
  checkConstraint: (constraint) => engine.checkConstraint(constraint),
  close: () => engine.close(),
  async *generate(request) {
    marks.engineCalled = now();
    if (request.promptTokenIds.length > 1000) {
      yield { type: "started", promptTokenIds: [], cachedTokens: 0, promptLogprobs: null };
      yield { type: "finished", index: 0, finishReason: "length", stopReason: null };
      return;
    }
    yield* engine.generate(request);
  },
};
const app = await buildApp({ ...services, engines: { ...services.engines!, get: async () => timedEngine } });
app.addHook("onRequest", async () => {
  marks.received = now();
});
const address = await app.listen({ port: 0, host: "127.0.0.1" });

const CLIENT = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ url, key, body }) => {
  const res = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key, "content-type": "application/json" }, body });
  const text = await res.text();
  parentPort.postMessage({ status: res.status, text: res.status === 200 ? "" : text });
});`;
const client = new Worker(CLIENT, { eval: true });
const send = (body: unknown) =>
  new Promise<{ status: number; text: string }>((resolve) => {
    client.once("message", resolve);
    client.postMessage({ url: `${address}/v1/chat/completions`, key, body: JSON.stringify(body) });
  });

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;
const small = (i: number) => ({
  model: modelId,
  max_tokens: 1,
  messages: [
    { role: "system", content: "You are brief." },
    { role: "user", content: `What is ${i} plus ${i}?` },
  ],
});

for (let i = 0; i < 20; i++) await send(small(i));
const stage: number[] = [];
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
for (let i = 0; i < REQUESTS; i++) {
  const res = await send(small(i));
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text}`);
  stage.push(marks.engineCalled - marks.received);
}
delay.disable();
console.log(`| small requests (${REQUESTS}) | server → engine median ${quantile(stage, 0.5).toFixed(2)} ms | p90 ${quantile(stage, 0.9).toFixed(2)} ms | event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms |`);

const words = ["river", "stone", "light", "quiet", "market", "orange", "window", "garden"];
const bigText = Array.from({ length: Math.ceil(BIG_CHARS / 7) }, (_, i) => words[i % words.length])
  .join(" ")
  .slice(0, BIG_CHARS);
const bigDelay = monitorEventLoopDelay({ resolution: 1 });
bigDelay.enable();
const res = await send({ model: modelId, max_tokens: 1, messages: [{ role: "user", content: bigText }] });
bigDelay.disable();
console.log(
  `| one ${BIG_CHARS}-character prompt | HTTP ${res.status} ${res.text.slice(0, 120)} | server → engine ${(marks.engineCalled - marks.received).toFixed(0)} ms | event loop blocked at most ${(bigDelay.max / 1e6).toFixed(0)} ms |`,
);

await client.terminate();
await app.close();
await services.engineRegistry.close();
await services.templatePool.close();
await services.store.close();
fs.rmSync(dataDir, { recursive: true, force: true });
