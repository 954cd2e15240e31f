/**
 * Trace API benchmark: calls/s ingested through POST /call/upsert_batch over HTTP, against raw
 * SQLite inserts of the same rows as a ceiling, then p50/p99 latency of /calls/stream_query (and
 * /calls/query_stats) with filters at two store sizes, on SQLite; then the same queries at the
 * large size on PostgreSQL (a throwaway cluster from the machine's PostgreSQL binaries).
 *
 *   npm run bench:trace                        # 100k and 1M stored calls, SQLite then PostgreSQL
 *   npm run bench:trace -- --calls 20000 --large 100000 --runs 50
 *   npm run bench:trace -- --only ui --dialects postgres   # the web UI's trace list queries alone
 *   npm run bench:trace -- --only index-cost --calls 20000  # what the range index rows cost raw SQLite inserts
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
import { sql } from "kysely";
import { loadConfig } from "../src/config.js";
import { ModelCatalog } from "../src/engine/catalog.js";
import { buildApp } from "../src/server/app.js";
import { LocalBlobStore } from "../src/store/blobs.js";
import { openStore } from "../src/store/db.js";
import { createApiKey } from "../src/store/keys.js";
import { type LeafDocument, leafInsertStatements } from "../src/store/trace/calls/leaf-index.js";
import { leafKeys } from "../src/store/trace/calls/leaf-keys.js";
import { numberLeaves } from "../src/store/trace/calls/number-leaves.js";
import { latencyInsertStatements, type NumberRows, numberInsertStatements } from "../src/store/trace/calls/range-index.js";
import { jsonSearchText, type TextDocument, textInsertStatements } from "../src/store/trace/calls/text-index.js";
import type { CallWrite } from "../src/store/trace/calls/types.js";
import { SqlTraceCallStore } from "../src/store/trace/trace-store.js";
import { makeTempDir } from "../src/testing/stores.js";
import { COUNT_CAP } from "../src/ui/view/call-count.js";
import { callQueryBody, type CallFilters } from "../src/ui/view/call-query.js";
import { findPostgresBinDir, startTempPostgres } from "../src/testing/postgres-server.js";

const { values: args } = parseArgs({
  options: {
    calls: { type: "string", default: "100000" },
    large: { type: "string", default: "1000000" },
    runs: { type: "string", default: "100" },
    concurrency: { type: "string", default: "4" },
    serve: { type: "string" },
    "database-url": { type: "string" },
    /** Which query sets to time: all, `ui` (the trace list's queries) alone, or `index-cost` (the raw SQLite peer with and without the range index rows). */
    only: { type: "string", default: "all" },
    dialects: { type: "string", default: "sqlite,postgres" },
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
    inputs: {
      model: `model-${n % 7}`,
      temperature: 0.7,
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: `Question number ${n}: ${"lorem ipsum dolor sit amet ".repeat(6)}` },
      ],
    },
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
async function rawCeiling(withLeaves: boolean, withText = false, withNumbers = false): Promise<number> {
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
        params.push(
          start.project_id,
          start.id,
          start.op_name,
          start.trace_id,
          start.parent_id,
          start.started_at,
          JSON.stringify(start.attributes),
          JSON.stringify(start.inputs),
          "u",
          end.ended_at,
          end.exception,
          JSON.stringify(end.output),
          JSON.stringify(end.summary),
        );
        if (withLeaves) {
          const keys = [...leafKeys(PROJECT, "inputs", start.inputs), ...leafKeys(PROJECT, "attributes", start.attributes), ...leafKeys(PROJECT, "output", end.output), ...leafKeys(PROJECT, "summary", end.summary)];
          documents.push({ callId: start.id, keys });
        }
      }
      const texts: TextDocument[] = [];
      if (withText) {
        for (let n = first; n < first + CALLS_PER_REQUEST; n++) {
          const { start, end } = callBody(n);
          texts.push(
            { projectId: PROJECT, callId: start.id, text: `${start.op_name}\n\n${jsonSearchText(JSON.stringify(start.inputs))}` },
            { projectId: PROJECT, callId: start.id, text: jsonSearchText(JSON.stringify(end.output)) },
          );
        }
      }
      const numbers: NumberRows[] = [];
      if (withNumbers) {
        for (let n = first; n < first + CALLS_PER_REQUEST; n++) {
          const { start, end } = callBody(n);
          const leaves = [...numberLeaves("inputs", start.inputs), ...numberLeaves("attributes", start.attributes), ...numberLeaves("output", end.output), ...numberLeaves("summary", end.summary)];
          numbers.push({ projectId: PROJECT, callId: start.id, leaves });
        }
      }
      // The range index's latency rows are computed from the calls just inserted.
      const latencies = withNumbers
        ? latencyInsertStatements(
            "sqlite",
            PROJECT,
            numbers.map((doc) => doc.callId),
          )
        : [];
      const leafInserts = [...leafInsertStatements("sqlite", documents), ...textInsertStatements("sqlite", texts), ...numberInsertStatements("sqlite", numbers), ...latencies].map((statement) => {
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

/** Child process: serve the data directory (and the PostgreSQL database, when given) and print the address and a key. */
async function serve(dataDir: string, databaseUrl: string | undefined) {
  const store = await openStore({ dataDir, databaseUrl });
  const config = loadConfig({ "data-dir": dataDir }, databaseUrl ? { DATABASE_URL: databaseUrl } : {});
  const app = await buildApp({ config, store, blobs: new LocalBlobStore(dataDir), catalog: new ModelCatalog(config.modelDirs) });
  const key = (await createApiKey(store.db, "bench")).key;
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  console.log(JSON.stringify({ address, key }));
  process.on(
    "SIGTERM",
    () =>
      void app
        .close()
        .then(() => store.close())
        .then(() => process.exit(0)),
  );
}

async function startServer(dataDir: string, databaseUrl?: string) {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve", dataDir, ...(databaseUrl ? ["--database-url", databaseUrl] : [])], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  const { address, key } = JSON.parse(first) as { address: string; key: string };
  const headers = { "content-type": "application/json", authorization: `Basic ${Buffer.from(`api:${key}`).toString("base64")}` };
  const post = async (url: string, body: unknown) => {
    const res = await fetch(`${address}/trace${url}`, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
    return text;
  };
  return {
    address,
    headers,
    post,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

type Post = (url: string, body: unknown) => Promise<string>;
type Query = [name: string, route: string, body: Record<string, unknown>, runsDivisor?: number];

const lines: string[] = [];
function report(line: string) {
  lines.push(line);
  console.log(line);
}

const OP = (name: string) => `weave:///${PROJECT}/op/${name}:Jq3fTtZ0GqVmPm1ZJ9t4N6fX2ma0iH3aQw6yH0kJ7aB`;

// [name, route, body, runs divisor]: unindexed scans run fewer times.
const API_QUERIES: Query[] = [
  ["newest 100 calls", "/calls/stream_query", { sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
  ["one op, newest 100", "/calls/stream_query", { filter: { op_names: [OP("rerank")] }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
  ["roots only, newest 100", "/calls/stream_query", { filter: { trace_roots_only: true }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
  ["one trace (5 calls)", "/calls/stream_query", { filter: { trace_ids: ["t777"] } }],
  ["children of a call", "/calls/stream_query", { filter: { parent_ids: ["c000005000"] } }],
  ["status = error, newest 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "summary.weave.status" }, { $literal: "error" }] } }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 }],
  ["inputs.model = model-3, first 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "inputs.model" }, { $literal: "model-3" }] } }, limit: 100 }],
  [
    "attributes.user_id = one user, newest 100",
    "/calls/stream_query",
    { query: { $expr: { $eq: [{ $getField: "attributes.user_id" }, { $literal: "user-42" }] } }, sort_by: [{ field: "started_at", direction: "desc" }], limit: 100 },
  ],
  [
    "attributes.user_id in two users and one op",
    "/calls/stream_query",
    { query: { $expr: { $and: [{ $in: [{ $getField: "attributes.user_id" }, [{ $literal: "user-7" }, { $literal: "user-8" }]] }, { $eq: [{ $getField: "op_name" }, { $literal: OP("chat") }] }] } } },
  ],
  ["summary.usage.model-3.prompt_tokens = 77, first 100", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 77 }] } }, limit: 100 }],
  [
    "latency > 900 ms and op, first 50",
    "/calls/stream_query",
    { query: { $expr: { $and: [{ $gt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 900 }] }, { $eq: [{ $getField: "op_name" }, { $literal: OP("chat") }] }] } }, limit: 50 },
  ],
  ["count of one op (query_stats)", "/calls/query_stats", { filter: { op_names: [OP("tool")] } }],
  ["count of one user (query_stats)", "/calls/query_stats", { query: { $expr: { $eq: [{ $getField: "attributes.user_id" }, { $literal: "user-42" }] } } }],
  ["inputs.model = a value no call has", "/calls/stream_query", { query: { $expr: { $eq: [{ $getField: "inputs.model" }, { $literal: "no-such-model" }] } }, limit: 100 }],
  ["inputs.model contains a text no call has (text index)", "/calls/stream_query", { query: { $expr: { $contains: { input: { $getField: "inputs.model" }, substr: { $literal: "no-such" } } } }, limit: 100 }],
];

/** The web UI's trace list: each filter as its page sends it (first page of 100 rows, newest first), and its count. */
function uiQueries(stored: number): Query[] {
  // Calls start 10 ms apart: a tenth of a percent of the span, halfway through.
  const span = stored * 10;
  const range = (at: number) => new Date(BASE + Math.floor(at)).toISOString();
  const filters: [string, CallFilters][] = [
    ["no filter", { rootsOnly: false }],
    ["search: a text one call has", { rootsOnly: false, text: "Question number 123456:" }],
    ["search: a text ~100 calls have", { rootsOnly: false, text: "number 4242" }],
    ["search: a text no call has", { rootsOnly: false, text: "no such text" }],
    ["search: a text every call has", { rootsOnly: false, text: "lorem ipsum" }],
    ["search: 3 characters no call has", { rootsOnly: false, text: "zqx" }],
    ["search: 3 characters every call has", { rootsOnly: false, text: "sum" }],
    ["op = rerank", { rootsOnly: false, op: "rerank" }],
    ["status = error", { rootsOnly: false, status: "error" }],
    ["status = success", { rootsOnly: false, status: "success" }],
    ["time range: 0.1 % of the span", { rootsOnly: false, from: range(span * 0.5), to: range(span * 0.501) }],
    ["roots only", { rootsOnly: true }],
    ["reaction = 👍", { rootsOnly: false, reaction: "👍" }],
    ["op + status + search + roots", { rootsOnly: true, op: "pipeline", status: "error", text: "lorem" }],
  ];
  const columns = ["id", "op_name", "display_name", "trace_id", "parent_id", "started_at", "ended_at", "exception", "summary"];
  return filters.flatMap(([name, filters]): Query[] => {
    const body = callQueryBody(PROJECT, filters) as unknown as Record<string, unknown>;
    return [
      [`UI list, ${name}`, "/calls/stream_query", { ...body, sort_by: [{ field: "started_at", direction: "desc" }], offset: 0, limit: 100, columns }],
      [`UI count, ${name}`, "/calls/query_stats", { ...body, limit: COUNT_CAP }],
    ];
  });
}

/**
 * Range filters on JSON paths (the UI offers none; its time range is on the started_at column):
 * a list's first page, newest first, and its count up to the UI's cap. Matches are rare (about one
 * call in 700 or 1000: the range index hands over its few calls), none, or common (one in 35: too
 * many candidates, so a list walks the calls in time order and a count is proven from a sample of
 * the range index). Bounds at a value many calls hold exactly (every token count is held by 1 call
 * in 700): strict ones must not take those calls. `summary.weave.latency_ms` is computed from the
 * call's times; the range index holds it as the database computes it for each ended call.
 */
function jsonRangeQueries(): Query[] {
  const ranges: [string, Record<string, unknown>][] = [
    ["summary.usage.model-3.prompt_tokens >= 149 (1 call in 700)", { $gte: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 149 }] }],
    ["summary.weave.latency_ms > 1000 (1 call in 997)", { $gt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 1000 }] }],
    ["inputs.temperature > 1 (no call)", { $gt: [{ $getField: "inputs.temperature" }, { $literal: 1 }] }],
    [
      "summary.usage.model-3.prompt_tokens >= 120 and < 121 (1 call in 700)",
      { $and: [{ $gte: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 120 }] }, { $lt: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 121 }] }] },
    ],
    [
      "summary.usage.model-3.prompt_tokens > 119 and <= 120 (1 call in 700)",
      { $and: [{ $gt: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 119 }] }, { $lte: [{ $getField: "summary.usage.model-3.prompt_tokens" }, { $literal: 120 }] }] },
    ],
    ["summary.weave.latency_ms >= 500 and < 501 (1 call in 997)", { $and: [{ $gte: [{ $getField: "summary.weave.latency_ms" }, { $literal: 500 }] }, { $lt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 501 }] }] }],
    ["summary.usage.model-3.completion_tokens >= 60 (1 call in 35)", { $gte: [{ $getField: "summary.usage.model-3.completion_tokens" }, { $literal: 60 }] }],
  ];
  const columns = ["id", "op_name", "display_name", "trace_id", "parent_id", "started_at", "ended_at", "exception", "summary"];
  return ranges.flatMap(([name, expr]): Query[] => [
    [`list, ${name}`, "/calls/stream_query", { filter: {}, query: { $expr: expr }, sort_by: [{ field: "started_at", direction: "desc" }], offset: 0, limit: 100, columns }],
    [`count, ${name}`, "/calls/query_stats", { filter: {}, query: { $expr: expr }, limit: COUNT_CAP }],
  ]);
}

/**
 * Times each query RUNS times after 5 warm-up runs; a fifth as often when warm-up shows it slower
 * than 200 ms, and 3 times after one warm-up run when that took over a second (full scans).
 */
async function measure(post: Post, queries: Query[], title: string) {
  report(`${title} (${RUNS} runs each after 5 warm-up runs; a fifth of that for queries slower than 200 ms, 3 for those slower than 1 s; HTTP round trip, body read)`);
  report("");
  report("| Query | rows | runs | p50 ms | p99 ms |");
  report("|---|---:|---:|---:|---:|");
  for (const [name, url, body, divisor = 1] of queries) {
    let rows = "0";
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      const begin = performance.now();
      await post(url, { project_id: PROJECT, ...body });
      warm.push(performance.now() - begin);
      if (warm[0]! > 1000) break;
    }
    const verySlow = warm[0]! > 1000;
    const slow = verySlow || warm.sort((a, b) => a - b)[2]! > 200;
    const runs = verySlow ? 3 : Math.max(5, Math.floor(RUNS / divisor / (slow ? 5 : 1)));
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const begin = performance.now();
      const text = await post(url, { project_id: PROJECT, ...body });
      times.push(performance.now() - begin);
      if (url === "/calls/stream_query") rows = String(text.split("\n").filter(Boolean).length);
      else {
        const counted = JSON.parse(text) as { count: number; has_more?: boolean };
        rows = `${counted.count}${counted.has_more ? "+" : ""}`;
      }
    }
    times.sort((a, b) => a - b);
    report(`| ${name} | ${rows} | ${runs} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`);
  }
  report("");
}

/** Writes calls [from, to) through the store interface in batches of 5000 (start and end together). */
async function grow(store: Awaited<ReturnType<typeof openStore>>, from: number, to: number): Promise<number> {
  const calls = new SqlTraceCallStore(store);
  const started = performance.now();
  for (let first = from; first < to; first += 5000) {
    const writes: CallWrite[] = [];
    for (let n = first; n < Math.min(to, first + 5000); n++) {
      const { start, end } = callBody(n);
      writes.push({
        start: {
          projectId: PROJECT,
          id: start.id,
          traceId: start.trace_id,
          opName: start.op_name,
          displayName: null,
          parentId: start.parent_id,
          threadId: null,
          turnId: null,
          startedAt: `${start.started_at.slice(0, 23)}000Z`,
          attributes: start.attributes,
          inputs: start.inputs,
          otelDump: null,
          wbUserId: "u",
          wbRunId: null,
          wbRunStep: null,
        },
        end: { projectId: PROJECT, id: end.id, traceId: null, endedAt: `${end.ended_at.slice(0, 23)}000Z`, exception: end.exception, output: end.output, summary: end.summary, wbRunStepEnd: null },
      });
    }
    await calls.writeCalls(writes);
  }
  return (to - from) / ((performance.now() - started) / 1000);
}

/** Reactions as the UI adds them: a 👍 on every 997th call, a 👎 on every 1999th. */
async function addReactions(post: Post, stored: number) {
  const batch: unknown[] = [];
  const flush = async () => {
    if (batch.length > 0) await post("/feedback/batch/create", { batch: batch.splice(0) });
  };
  for (let n = 0; n < stored; n++) {
    const emoji = n % 997 === 0 ? "👍" : n % 1999 === 0 ? "👎" : undefined;
    if (!emoji) continue;
    batch.push({ project_id: PROJECT, weave_ref: `weave:///${PROJECT}/call/c${String(n).padStart(9, "0")}`, feedback_type: "wandb.reaction.1", payload: { emoji } });
    if (batch.length === 500) await flush();
  }
  await flush();
}

/** SQLite: ingest over HTTP against the raw ceiling, queries at both sizes. */
async function benchSqlite(onlyUi: boolean) {
  const dataDir = makeTempDir("flywheel-bench-");
  const { address, headers, post, stop } = await startServer(dataDir);
  const store = await openStore({ dataDir });

  if (!onlyUi) {
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
    const ingestRate = SMALL / ((performance.now() - ingestStart) / 1000);

    // 2. Ceiling: the same rows through one prepared multi-row INSERT per 500 calls, straight into
    // SQLite; once alone and once with the calls' leaf index documents, as the server stores them.
    const rawRate = await rawCeiling(false);
    const rawLeavesRate = await rawCeiling(true);
    const rawTextRate = await rawCeiling(true, true);
    const rawNumbersRate = await rawCeiling(true, true, true);

    report(`Ingest: ${SMALL} calls in ${batches.length} requests of ${CALLS_PER_REQUEST} calls (${(bodyBytes / batches.length / 1024).toFixed(0)} KiB each), ${CONCURRENCY} in flight`);
    report("");
    report("| Path | calls/s |");
    report("|---|---:|");
    report(`| POST /call/upsert_batch over HTTP (validation, JSON, upsert, indexes) | ${Math.round(ingestRate)} |`);
    report(`| Raw SQLite: the same rows, prepared 500-row INSERT, same schema and indexes | ${Math.round(rawRate)} |`);
    report(`| Raw SQLite: as above, with the leaf index documents | ${Math.round(rawLeavesRate)} |`);
    report(`| Raw SQLite: as above, with the leaf and text index documents | ${Math.round(rawTextRate)} |`);
    report(`| Raw SQLite: as above, with the leaf and text index documents and the range index rows | ${Math.round(rawNumbersRate)} |`);
    report("");
    await measure(post, API_QUERIES, `SQLite: queries at ${SMALL} stored calls`);
  }

  // 3. Grow to the large size through the store (the HTTP path was measured above).
  const from = onlyUi ? 0 : SMALL;
  if (LARGE > from) report(`SQLite: grew the store to ${LARGE} calls through the store interface at ${Math.round(await grow(store, from, LARGE))} calls/s.`);
  report(`Database file: ${(fs.statSync(path.join(dataDir, "flywheel.db")).size / 1024 / 1024).toFixed(0)} MiB.`);
  report("");
  await addReactions(post, LARGE);
  if (!onlyUi) await measure(post, API_QUERIES, `SQLite: queries at ${LARGE} stored calls`);
  await measure(post, uiQueries(LARGE), `SQLite: the web UI's trace list at ${LARGE} stored calls`);
  await measure(post, jsonRangeQueries(), `SQLite: range filters on JSON paths at ${LARGE} stored calls`);

  await stop();
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/** PostgreSQL: a throwaway cluster, grown through the store to the large size, the same queries. */
async function benchPostgres(onlyUi: boolean) {
  const binDir = findPostgresBinDir();
  if (!binDir) {
    report("PostgreSQL: no binaries found (initdb); skipped.");
    return;
  }
  const cluster = await startTempPostgres(binDir);
  const dataDir = makeTempDir("flywheel-bench-pg-");
  try {
    const store = await openStore({ dataDir, databaseUrl: cluster.url });
    report(`PostgreSQL: grew the store to ${LARGE} calls through the store interface at ${Math.round(await grow(store, 0, LARGE))} calls/s.`);
    await sql`ANALYZE`.execute(store.db);
    const size = await sql<{ bytes: string }>`SELECT pg_database_size(current_database()) AS bytes`.execute(store.db);
    report(`Database size: ${(Number(size.rows[0]!.bytes) / 1024 / 1024).toFixed(0)} MiB.`);
    report("");
    await store.close();
    const { post, stop } = await startServer(dataDir, cluster.url);
    await addReactions(post, LARGE);
    if (!onlyUi) await measure(post, API_QUERIES, `PostgreSQL: queries at ${LARGE} stored calls`);
    await measure(post, uiQueries(LARGE), `PostgreSQL: the web UI's trace list at ${LARGE} stored calls`);
    await measure(post, jsonRangeQueries(), `PostgreSQL: range filters on JSON paths at ${LARGE} stored calls`);
    await stop();
  } finally {
    cluster.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * What the range index rows cost the raw SQLite peer: runs with and without them, alternated so a
 * shared machine's load falls on both alike; the median of each.
 */
async function benchIndexCost() {
  const rounds = 3;
  const without: number[] = [];
  const withNumbers: number[] = [];
  for (let round = 0; round < rounds; round++) {
    without.push(await rawCeiling(true, true));
    withNumbers.push(await rawCeiling(true, true, true));
  }
  const median = (rates: number[]) => Math.round([...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!);
  report(`Raw SQLite, ${SMALL} calls, ${rounds} alternated runs each (median; all runs)`);
  report("");
  report("| Path | calls/s | runs |");
  report("|---|---:|---|");
  report(`| leaf and text index documents | ${median(without)} | ${without.map(Math.round).join(", ")} |`);
  report(`| as above, and the range index rows | ${median(withNumbers)} | ${withNumbers.map(Math.round).join(", ")} |`);
  report("");
}

async function main() {
  const onlyUi = args.only === "ui";
  const dialects = args.dialects.split(",");
  const load = () => fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  report(`Load average at start: ${load()}`);
  if (args.only === "index-cost") {
    await benchIndexCost();
    report(`Load average at end: ${load()}`);
    return;
  }
  if (dialects.includes("sqlite")) await benchSqlite(onlyUi);
  if (dialects.includes("postgres")) await benchPostgres(onlyUi);
  report(`Load average at end: ${load()}`);
}

if (args.serve) await serve(args.serve, args["database-url"]);
else await main();
