/**
 * What the HTTP layer adds to a chat completion: time to first token and per-token latency of
 * streamed completions through the real server (Fastify, auth, validation, template, SSE) against
 * `engine.generate` on the same engine with the same prompt token ids, in the same run, at 1 and
 * 16 concurrent clients. Rounds alternate between the two paths so drift in machine load hits
 * both alike; medians and bests are reported (one client gets four times the rounds: it is cheap
 * and the noisiest).
 *
 *   npm run bench:chat            # BENCH_TOKENS=16 BENCH_PROMPT_WORDS=10 BENCH_ROUNDS=6 BENCH_HIDDEN=384 BENCH_LAYERS=6
 *
 * The model is a random qwen2-shaped checkpoint written once under bench/.cache/; the prefix cache
 * is off so every request runs its whole prompt. Kernels follow FLYWHEEL_KERNELS. Not a test:
 * numbers depend on the machine and its load.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { openServices } from "../src/cli/open-services.js";
import { loadConfig } from "../src/config.js";
import type { GenerateRequest, InferenceEngine } from "../src/engine/api.js";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { defaultSamplingParams } from "../src/engine/sampling/params.js";
import { buildApp } from "../src/server/app.js";
import { createApiKey } from "../src/store/keys.js";
import { describeMachine } from "./machine.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const TOKENS = env("BENCH_TOKENS", 16);
const PROMPT_WORDS = env("BENCH_PROMPT_WORDS", 10);
const ROUNDS = env("BENCH_ROUNDS", 6);
const hidden = env("BENCH_HIDDEN", 384);
const shape = { hiddenSize: hidden, numLayers: env("BENCH_LAYERS", 6), numHeads: 8, numKvHeads: 2, intermediateSize: 3 * hidden };
const CONCURRENCY = [1, 16];

const modelId = `chat-qwen2-h${shape.hiddenSize}-l${shape.numLayers}`;
const modelDir = path.join(path.dirname(fileURLToPath(import.meta.url)), ".cache", modelId);
if (!fs.existsSync(path.join(modelDir, "config.json"))) makeTinyModel(modelDir, { architecture: "qwen2", seed: 3, ...shape });

/** What one streamed request saw: when its first token arrived and how long each later one took. */
interface Timing {
  firstTokenMs: number;
  perTokenMs: number;
}

const WORDS = ["river", "stone", "light", "quiet", "market", "orange", "window", "garden", "number", "travel"];
/** A distinct user message per client, so no two requests share more than the template's prefix. */
const message = (client: number) => `${Array.from({ length: PROMPT_WORDS }, (_, i) => WORDS[(client * 7 + i * 3) % WORDS.length]).join(" ")} (${client})`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

function timing(start: number, arrivals: number[]): Timing {
  const first = arrivals[0]!;
  const last = arrivals.at(-1)!;
  return { firstTokenMs: first - start, perTokenMs: arrivals.length > 1 ? (last - first) / (arrivals.length - 1) : 0 };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-bench-chat-"));
const config = loadConfig({ "data-dir": dataDir }, { FLYWHEEL_MODELS: modelDir, FLYWHEEL_PREFIX_CACHE_MB: "0", FLYWHEEL_MAX_NUM_SEQS: "16" });
const services = await openServices(config);
const key = (await createApiKey(services.store.db, "bench")).key;
const engine: InferenceEngine = await services.engineRegistry.get(modelId);

/** Absolute times (ms since the epoch, comparable across threads) of the last request's stages inside the server. */
const now = () => performance.timeOrigin + performance.now();
const serverMarks = { received: 0, engineCalled: 0, firstEvent: 0 };
/** The server's engine, recording when the route calls it and when the engine's first event comes back. */
const timedEngine: InferenceEngine = {
  info: engine.info,
  tokenizer: engine.tokenizer,
  checkConstraint: (constraint) => engine.checkConstraint(constraint),
  close: () => engine.close(),
  async *generate(request) {
    serverMarks.engineCalled = now();
    let first = true;
    for await (const event of engine.generate(request)) {
      if (first) serverMarks.firstEvent = now();
      first = false;
      yield event;
    }
  },
};
const app = await buildApp({ ...services, engines: { ...services.engines!, get: async () => timedEngine } });
app.addHook("onRequest", async () => {
  serverMarks.received = now();
});
const address = await app.listen({ port: 0, host: "127.0.0.1" });

const body = (client: number) => ({
  model: modelId,
  messages: [{ role: "user", content: message(client) }],
  temperature: 0,
  repetition_penalty: 1,
  max_completion_tokens: TOKENS,
  ignore_eos: true,
  stream: true,
});

/**
 * The HTTP clients run in a worker thread of their own, as a remote client would: parsing their
 * streams never delays the server's event loop. Each request reports its own start and the
 * arrival of every SSE event that carries content (a token's text), on the worker's clock.
 */
const CLIENT_SOURCE = `
const { parentPort } = require("node:worker_threads");
async function stream({ url, key, body }) {
  const start = performance.now();
  const response = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error("HTTP " + response.status + ": " + (await response.text()));
  const arrivals = [];
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of response.body) {
    buffered += decoder.decode(bytes, { stream: true });
    for (let end = buffered.indexOf("\\n\\n"); end >= 0; end = buffered.indexOf("\\n\\n")) {
      const data = buffered.slice(6, end);
      buffered = buffered.slice(end + 2);
      if (data === "[DONE]") continue;
      const choice = JSON.parse(data).choices[0];
      if (choice && choice.finish_reason === null && choice.delta.content !== undefined && !("role" in choice.delta)) arrivals.push(performance.now());
    }
  }
  return { start, arrivals, startAt: performance.timeOrigin + start, firstAt: performance.timeOrigin + arrivals[0] };
}
parentPort.on("message", async ({ id, requests }) => {
  try {
    parentPort.postMessage({ id, results: await Promise.all(requests.map(stream)) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});
`;
const client = new Worker(CLIENT_SOURCE, { eval: true });
let nextBatch = 0;

interface ClientResult {
  start: number;
  arrivals: number[];
  /** Absolute times of the request's start and its first token. */
  startAt: number;
  firstAt: number;
}

/** `clients` streamed completions over HTTP at once, from the client thread. */
function streamsOverHttp(clients: number): Promise<ClientResult[]> {
  const id = nextBatch++;
  const requests = Array.from({ length: clients }, (_, i) => ({ url: `${address}/v1/chat/completions`, key, body: body(i) }));
  return new Promise((resolve, reject) => {
    const onMessage = (message: { id: number; results?: ClientResult[]; error?: string }) => {
      if (message.id !== id) return;
      client.off("message", onMessage);
      if (message.error || !message.results) return reject(new Error(message.error));
      if (message.results.some((result) => result.arrivals.length === 0)) return reject(new Error("no token arrived over HTTP"));
      resolve(message.results);
    };
    client.on("message", onMessage);
    client.postMessage({ id, requests });
  });
}

async function overHttp(clients: number): Promise<Timing[]> {
  return (await streamsOverHttp(clients)).map(({ start, arrivals }) => timing(start, arrivals));
}

/** The same completion straight from the engine, on the prompt ids the server rendered. */
async function direct(promptTokenIds: number[], client: number, round: number): Promise<Timing> {
  const start = performance.now();
  const request: GenerateRequest = {
    requestId: `bench-direct-${round}-${client}-${Math.random()}`,
    promptTokenIds,
    params: defaultSamplingParams({ temperature: 0, maxTokens: TOKENS, ignoreEos: true }),
  };
  const arrivals: number[] = [];
  for await (const event of engine.generate(request)) if (event.type === "output" && event.text !== "") arrivals.push(performance.now());
  return timing(start, arrivals);
}

/** The prompt ids the server renders for each client's message (read once, outside the timings). */
async function promptIds(clients: number): Promise<number[][]> {
  const ids: number[][] = [];
  for (let client = 0; client < clients; client++) {
    const response = await fetch(`${address}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body(client), stream: false, max_completion_tokens: 1, return_token_ids: true }),
    });
    ids.push(((await response.json()) as { prompt_token_ids: number[] }).prompt_token_ids);
  }
  return ids;
}

console.log(`chat HTTP overhead benchmark: ${modelId}, kernels per FLYWHEEL_KERNELS (${process.env.FLYWHEEL_KERNELS ?? "auto"}), ${TOKENS} tokens per request, ${ROUNDS} rounds`);
console.log(`machine: ${describeMachine()}`);
const prompts = await promptIds(Math.max(...CONCURRENCY));
console.log(`prompt: ${prompts[0]!.length} tokens`);
// Warm-up of both paths (JIT, engine caches, connections).
await overHttp(2);
await Promise.all([0, 1].map((i) => direct(prompts[i]!, i, -1)));

const pct = (http: number, direct: number) => `${((http / direct - 1) * 100).toFixed(1)}%`;
const rows: string[] = [];
for (const clients of CONCURRENCY) {
  const http: Timing[] = [];
  const bare: Timing[] = [];
  // One client is cheap and noisy: more rounds of it.
  const rounds = clients === 1 ? 4 * ROUNDS : ROUNDS;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ["http", "direct"] : ["direct", "http"];
    for (const path of order) {
      if (path === "http") http.push(...(await overHttp(clients)));
      else bare.push(...(await Promise.all(Array.from({ length: clients }, (_, i) => direct(prompts[i]!, i, round)))));
    }
  }
  const first = (timings: Timing[]) => timings.map((t) => t.firstTokenMs);
  const ttft = { http: median(first(http)), direct: median(first(bare)), bestHttp: Math.min(...first(http)), bestDirect: Math.min(...first(bare)) };
  const tpot = { http: median(http.map((t) => t.perTokenMs)), direct: median(bare.map((t) => t.perTokenMs)) };
  rows.push(
    `| ${clients} | ${http.length} | ${ttft.direct.toFixed(1)} | ${ttft.http.toFixed(1)} | ${pct(ttft.http, ttft.direct)} | ${ttft.bestDirect.toFixed(1)} | ${ttft.bestHttp.toFixed(1)} | ${pct(ttft.bestHttp, ttft.bestDirect)} | ${tpot.direct.toFixed(2)} | ${tpot.http.toFixed(2)} | ${pct(tpot.http, tpot.direct)} |`,
  );
}
// Where the time of one request goes over HTTP (one client at a time).
const stages: Record<string, number[]> = { "client → server": [], "server → engine (auth, validation, template, tokens)": [], "engine: prompt and first token": [], "engine → client (events, SSE, client parse)": [] };
for (let round = 0; round < 4 * ROUNDS; round++) {
  const [result] = await streamsOverHttp(1);
  const values = [serverMarks.received - result!.startAt, serverMarks.engineCalled - serverMarks.received, serverMarks.firstEvent - serverMarks.engineCalled, result!.firstAt - serverMarks.firstEvent];
  Object.values(stages).forEach((list, i) => list.push(values[i]!));
}
console.log("\n| one request over HTTP, stage | median (ms) |\n|---|---:|");
for (const [stage, values] of Object.entries(stages)) console.log(`| ${stage} | ${median(values).toFixed(2)} |`);

console.log(
  "\n| clients | requests per path | TTFT engine, median (ms) | TTFT HTTP, median (ms) | HTTP adds | TTFT engine, best (ms) | TTFT HTTP, best (ms) | HTTP adds | per token engine (ms) | per token HTTP (ms) | HTTP adds |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const row of rows) console.log(row);

await client.terminate();
await app.close();
await services.engineRegistry.close();
await services.store.close();
fs.rmSync(dataDir, { recursive: true, force: true });
