/**
 * Trace API benchmark: calls/s ingested through POST /call/upsert_batch over HTTP, against raw
 * SQLite inserts of the same rows as a ceiling, then p50/p99 latency of /calls/stream_query (and
 * /calls/query_stats) with filters at two store sizes, on SQLite.
 *
 *   npm run bench:trace                        # 100k and 1M stored calls
 *   npm run bench:trace -- --calls 20000 --large 100000 --runs 50
 *
 * The server runs in a child process, as it would beside an SDK client; the parent sends the
 * requests, grows the database directly and runs the raw SQLite peer.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import BetterSqlite3 from "better-sqlite3";
import { loadConfig } from "../src/config.js";
import { ModelCatalog } from "../src/engine/catalog.js";
import { buildApp } from "../src/server/app.js";
import { LocalBlobStore } from "../src/store/blobs.js";
import { openStore } from "../src/store/db.js";
import { createApiKey } from "../src/store/keys.js";
import { type LeafDocument, leafInsertStatements } from "../src/store/trace/calls/leaf-index.js";
import { leafKeys } from "../src/store/trace/calls/leaf-keys.js";
import type { CallWrite } from "../src/store/trace/calls/types.js";
import { SqlTraceCallStore } from "../src/store/trace/trace-store.js";
import { makeTempDir } from "../src/testing/stores.js";

const { values: args } = parseArgs({
  options: {
    calls: { type: "string", default: "100000" },
    large: { type: "string", default: "1000000" },
    runs: { type: "string", default: "100" },
    concurrency: { type: "string", default: "4" },
    serve: { type: "string" },
  },
});
const SMALL = Number(args.calls);
const LARGE = Number(args.large);
const RUNS = Number(args.runs);
const CONCURRENCY = Number(args.concurrency);
const CALLS_PER_REQUEST = 500;
const PROJECT = "bench/p";
const OPS = ["chat", "retrieve", "rerank", "tool", "pipeline"];
const BASE = Date.UTC(2024, 0, 1);
/** Distinct `attributes.user_id` values: a selective filter (about 100 calls each at 1M calls). */
const USERS = 10_007;

/** Call `n` of the data set: traces of five calls (a root pipeline and four children), SDK-like payloads. */
function callBody(n: number) {
  const trace = Math.floor(n / 5);
  const position = n % 5;
  const id = `c${String(n).padStart(9, "0")}`;
  const op = position === 0 ? "pipeline" : OPS[position - 1]!;
  const started = BASE + n * 10;
  const start = {
    project_id: PROJECT,
    id,
    trace_id: `t${trace}`,
    parent_id: position === 0 ? null : `c${String(trace * 5).padStart(9, "0")}`,
    op_name: `weave:///${PROJECT}/op/${op}:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB`,
    started_at: new Date(started).toISOString(),
    attributes: { weave: { client_version: "0.11.1", source: "js-sdk" }, env: n % 2 === 0 ? "prod" : "dev", user_id: `user-${n % USERS}` },
    inputs: { model: `model-${n % 7}`, temperature: 0.7, messages: [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: `Question number ${n}: ${"lorem ipsum dolor sit amet ".repeat(6)}` }] },
  };
  const end = {
    project_id: PROJECT,
    id,
    ended_at: new Date(started + 5 + (n % 997)).toISOString(),
    output: { choices: [{ index: 0, message: { role: "assistant", content: `Answer ${n}: ${"consectetur adipiscing elit ".repeat(5)}` }, finish_reason: "stop" }] },
    summary: { usage: { [`model-${n % 7}`]: { prompt_tokens: 50 + (n % 100), completion_tokens: 20 + (n % 50), requests: 1 } } },
    exception: n % 50 === 0 ? "TimeoutError: upstream took too long" : null,
  };
  return { start, end };
}

/** Calls/s of the raw SQLite peer: 500-row transactions straight into a fresh database. */
async function rawCeiling(withLeaves: boolean): Promise<number> {
  const rawDir = makeTempDir("flywheel-bench-raw-");
  // The server's schema and indexes, through its migrations.
  await (await openStore({ dataDir: rawDir })).close();
  const raw = new BetterSqlite3(path.join(rawDir, "flywheel.db"));
  try {
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = FULL");
    const columns = ["project_id", "id", "op_name", "trace_id", "parent_id", "started_at", "attributes", "inputs", "wb_user_id", "ended_at", "exception", "output", "summary"];
    const insert = raw.prepare(`INSERT INTO trace_calls (${columns.join(", ")}) VALUES ${new Array(CALLS_PER_REQUEST).fill(`(${columns.map(() => "?").join(", ")})`).join(", ")}`);
    const leafStatements = new Map<string, BetterSqlite3.Statement>();
    const started = performance.now();
    for (let first = 0; first + CALLS_PER_REQUEST <= SMALL; first += CALLS_PER_REQUEST) {
      const params: unknown[] = [];
      const documents: LeafDocument[] = [];
      for (let n = first; n < first + CALLS_PER_REQUEST; n++) {
        const { start, end } = callBody(n);
        params.push(start.project_id, start.id, start.op_name, start.trace_id, start.parent_id, start.started_at, JSON.stringify(start.attributes), JSON.stringify(start.inputs), "u", end.ended_at, end.exception, JSON.stringify(end.output), JSON.stringify(end.summary));
        if (withLeaves) {
          const keys = [...leafKeys(PROJECT, "inputs", start.inputs), ...leafKeys(PROJECT, "attributes", start.attributes), ...leafKeys(PROJECT, "output", end.output), ...leafKeys(PROJECT, "summary", end.summary)];
          documents.push({ callId: start.id, keys });
        }
      }
      const leafInserts = leafInsertStatements("sqlite", documents).map((statement) => {
        let prepared = leafStatements.get(statement.sql);
        if (!prepared) leafStatements.set(statement.sql, (prepared = raw.prepare(statement.sql)));
        return () => prepared.run(statement.parameters as unknown[]);
      });
      raw.transaction(() => {
        insert.run(...params);
        for (const run of leafInserts) run();
      })();
    }
    return (Math.floor(SMALL / CALLS_PER_REQUEST) * CALLS_PER_REQUEST) / ((performance.now() - started) / 1000);
  } finally {
    raw.close();
    fs.rmSync(rawDir, { recursive: true, force: true });
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Child process: serve the data directory and print the address and a key. */
async function serve(dataDir: string) {
  const store = await openStore({ dataDir });
  const config = loadConfig({ "data-dir": dataDir }, {});
  const app = await buildApp({ config, store, blobs: new LocalBlobStore(dataDir), catalog: new ModelCatalog(config.modelDirs) });
  const key = (await createApiKey(store.db, "bench")).key;
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  console.log(JSON.stringify({ address, key }));
  process.on("SIGTERM", () => void app.close().then(() => store.close()).then(() => process.exit(0)));
}

async function startServer(dataDir: string) {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve", dataDir], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  const { address, key } = JSON.parse(first) as { address: string; key: string };
  return { address, key, stop: () => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.kill("SIGTERM"))) };
}

async function main() {
  const dataDir = makeTempDir("flywheel-bench-");
  const { address, key, stop } = await startServer(dataDir);
  const store = await openStore({ dataDir });
  const headers = { "content-type": "application/json", authorization: `Basic ${Buffer.from(`api:${key}`).toString("base64")}` };
  const post = async (url: string, body: unknown) => {
    const res = await fetch(`${address}/trace${url}`, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
    return text;
  };
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };

  // 1. Ingest over HTTP: requests of 500 calls (a start and an end each), CONCURRENCY in flight.
  const batches: string[] = [];
  for (let first = 0; first < SMALL; first += CALLS_PER_REQUEST) {
    const batch = [];
    for (let n = first; n < Math.min(SMALL, first + CALLS_PER_REQUEST); n++) {
      const { start, end } = callBody(n);
      batch.push({ mode: "start", req: { start } }, { mode: "end", req: { end } });
    }
    batches.push(JSON.stringify({ batch }));
  }
  const bodyBytes = batches.reduce((sum, body) => sum + body.length, 0);
  let next = 0;
  const ingestStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) {
        const body = batches[next++]!;
        const res = await fetch(`${address}/trace/call/upsert_batch`, { method: "POST", headers, body });
        if (!res.ok) throw new Error(`upsert_batch: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  const ingestSeconds = (performance.now() - ingestStart) / 1000;
  const ingestRate = SMALL / ingestSeconds;

  // 2. Ceiling: the same rows through one prepared multi-row INSERT per 500 calls, straight into
  // SQLite; once alone and once with the calls' leaf index documents, as the server stores them.
  const rawRate = await rawCeiling(false);
  const rawLeavesRate = await rawCeiling(true);

  report(`Ingest: ${SMALL} calls in ${batches.length} requests of ${CALLS_PER_REQUEST} calls (${(bodyBytes / batches.length / 1024).toFixed(0)} KiB each), ${CONCURRENCY} in flight`);
  report("");
  report("| Path | calls/s |");
  report("|---|---:|");
  report(`| POST /call/upsert_batch over HTTP (validation, JSON, upsert, indexes) | ${Math.round(ingestRate)} |`);
  report(`| Raw SQLite: the same rows, prepared 500-row INSERT, same schema and indexes | ${Math.round(rawRate)} |`);
  report(`| Raw SQLite: as above, with the leaf index documents | ${Math.round(rawLeavesRate)} |`);
  report("");

  // [name, route, body, runs divisor]: unindexed scans run fewer times.
  const queries: [string, string, Record<string, unknown>, number?][] = [
    ["newest 100 calls", "/calls/stream_query", { sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
    ["one op, newest 100", "/calls/stream_query", { filter: { op_names: [`weave:///${PROJECT}/op/rerank:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB`] }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
    ["roots only, newest 100", "/calls/stream_query", { filter: { trace_roots_only: true }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
    ["one trace (5 calls)", "/calls/stream_query", { filter: { trace_ids: ["t777"] } }],
    ["children of a call", "/calls/stream_query", { filter: { parent_ids: ["c000005000"] } }],
    ["status = error, newest 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "summary.weave.status" }, { $literal: "error" }] } }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
    ["inputs.model = model-3, first 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "inputs.model" }, { $literal: "model-3" }] } }, limit: 100 }],
    ["attributes.user_id = one user, newest 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "attributes.user_id" }, { $literal: "user-42" }] } }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
    ["attributes.user_id in two users and one op", "/calls/stream_query", { query: { $expr: { $and: [{ $in: [{ $getField: "attributes.user_id" }, [{ $literal: "user-7" }, { $literal: "user-8" }]] }, { $eq: [{ $getField: "op_name" }, { $literal: `weave:///${PROJECT}/op/chat:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB` }] }] } } }],
    ["summary.usage.model-3.prompt_tokens = 77, first 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 77 }] } }, limit: 100 }],
    ["latency > 900 ms and op, first 50", "/calls/stream_query", { query: { $expr: { $and: [{ $gt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 900 }] }, { $eq: [{ $getField: "op_name" }, { $literal: `weave:///${PROJECT}/op/chat:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB` }] }] } }, limit: 50 }],
    ["count of one op (query_stats)", "/calls/query_stats", { filter: { op_names: [`weave:///${PROJECT}/op/tool:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB`] } }],
    ["count of one user (query_stats)", "/calls/query_stats", { query: { $expr: { $eq: [{ $getField: "attributes.user_id" }, { $literal: "user-42" }] } } }],
    ["inputs.model = a value no call has", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "inputs.model" }, { $literal: "no-such-model" }] } }, limit: 100 }],
    ["inputs.model contains a text no call has (not indexed: scans every call)", "/calls/stream_query", { query: { $expr: { $contains: { input: { $getField: "inputs.model" }, substr: { $literal: "no-such" } } } }, limit: 100 }, 10],
  ];

  async function measure(stored: number) {
    report(`Queries at ${stored} stored calls (${RUNS} runs each, a tenth for the full scan, after 5 warm-up runs; HTTP round trip, body read)`);
    report("");
    report("| Query | rows | p50 ms | p99 ms |");
    report("|---|---:|---:|---:|");
    for (const [name, url, body, divisor = 1] of queries) {
      let rows = 0;
      for (let i = 0; i < 5; i++) await post(url, { project_id: PROJECT, ...body });
      const times: number[] = [];
      for (let i = 0; i < Math.max(5, Math.floor(RUNS / divisor)); i++) {
        const begin = performance.now();
        const text = await post(url, { project_id: PROJECT, ...body });
        times.push(performance.now() - begin);
        rows = url === "/calls/stream_query" ? text.split("\n").filter(Boolean).length : Number(JSON.parse(text).count);
      }
      times.sort((a, b) => a - b);
      report(`| ${name} | ${rows} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`);
    }
    report("");
  }

  await measure(SMALL);

  // 3. Grow to the large size through the store (the HTTP path was measured above).
  const calls = new SqlTraceCallStore(store);
  const growStart = performance.now();
  for (let first = SMALL; first < LARGE; first += 5000) {
    const writes: CallWrite[] = [];
    for (let n = first; n < Math.min(LARGE, first + 5000); n++) {
      const { start, end } = callBody(n);
      writes.push({
        start: { projectId: PROJECT, id: start.id, traceId: start.trace_id, opName: start.op_name, displayName: null, parentId: start.parent_id, threadId: null, turnId: null, startedAt: `${start.started_at.slice(0, 23)}000Z`, attributes: start.attributes, inputs: start.inputs, otelDump: null, wbUserId: "u", wbRunId: null, wbRunStep: null },
        end: { projectId: PROJECT, id: end.id, traceId: null, endedAt: `${end.ended_at.slice(0, 23)}000Z`, exception: end.exception, output: end.output, summary: end.summary, wbRunStepEnd: null },
      });
    }
    await calls.writeCalls(writes);
  }
  if (LARGE > SMALL) report(`Grew the store to ${LARGE} calls through the store interface at ${Math.round((LARGE - SMALL) / ((performance.now() - growStart) / 1000))} calls/s.`);
  report(`Database file: ${(fs.statSync(path.join(dataDir, "flywheel.db")).size / 1024 / 1024).toFixed(0)} MiB.`);
  report("");
  if (LARGE > SMALL) await measure(LARGE);

  await stop();
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

if (args.serve) await serve(args.serve);
else await main();
