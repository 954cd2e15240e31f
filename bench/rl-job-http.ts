/**
 * A whole RL job over HTTP, as a user runs one: starts `flywheel serve` (SQLite, the built-in
 * trainer on the default kernels) in a child process, registers a trainable model, posts one RL
 * job of trajectory groups (8 completions each, token ids in the logprobs as ART sends them,
 * random rewards) twice, timing each from the POST to `training_ended` (the first job also loads
 * the model into the trainer thread). Reports trained tokens per second of the whole job beside the
 * steps' own figure, and the server's peak resident memory.
 *
 *   npx tsx bench/rl-job-http.ts                       # the ~4M qwen2: 4 groups × 8 × 96 tokens
 *   BENCH_SHAPE=qwen05b npx tsx bench/rl-job-http.ts   # Qwen2.5-0.5B's shapes (bf16): 8 groups × 8 × ~256 tokens
 *
 * BENCH_GROUPS and BENCH_TOKENS change the job's size, BENCH_ROW sets `packed_sequence_length` (the
 * packed rows' length; default: the job's own choice). Not a test: numbers depend on the machine.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { Rng } from "../src/engine/sampling/rng.js";
import { ensureBenchModel } from "./engine/model.js";

const SHAPE = process.env.BENCH_SHAPE ?? "small";
const big = SHAPE === "qwen05b";
const GROUPS = Number(process.env.BENCH_GROUPS ?? (big ? 8 : 4));
const TOKENS = Number(process.env.BENCH_TOKENS ?? (big ? 256 : 96));
const GROUP_SIZE = 8;
const ROW = process.env.BENCH_ROW ? Number(process.env.BENCH_ROW) : undefined;
const cacheDir = path.join(import.meta.dirname, ".cache");

function smallModel(): { dir: string; tokenizerSize: number } {
  const dir = path.join(cacheDir, "rl-http-qwen2-4m");
  const done = path.join(dir, ".complete");
  if (!fs.existsSync(done)) {
    fs.rmSync(dir, { recursive: true, force: true });
    const model = makeTinyModel(dir, { architecture: "qwen2", seed: 1, hiddenSize: 256, numLayers: 4, numHeads: 8, numKvHeads: 4, intermediateSize: 704, vocabSize: 2048, maxPositionEmbeddings: 4096 });
    fs.writeFileSync(done, JSON.stringify({ tokenizerSize: model.tokenizerSize }));
  }
  return { dir, tokenizerSize: (JSON.parse(fs.readFileSync(done, "utf8")) as { tokenizerSize: number }).tokenizerSize };
}

const model = big ? ensureBenchModel(cacheDir, "bf16", console.log) : smallModel();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-bench-rl-http-"));
// FLYWHEEL_MODELS serves a model directory under its folder name.
const baseModel = path.basename(model.dir);
const key = `fw_bench_${"x".repeat(40)}`;
const port = 18_000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "..", "src", "cli", "main.ts"), "serve", "--port", String(port), "--data-dir", dataDir], {
  env: { ...process.env, FLYWHEEL_API_KEY: key, FLYWHEEL_LOG_LEVEL: "warn", FLYWHEEL_MODELS: model.dir },
  stdio: ["ignore", "ignore", "inherit"],
});

async function api(method: string, url: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + url, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

interface JobRun {
  seconds: number;
  steps: Record<string, number>[];
  /** Σ of the steps' own durations (their trainable tokens over their tokens_per_second). */
  stepSeconds: number;
}

/** Posts one RL job and follows its events to the end; times POST → training_ended. */
async function runJob(modelId: string, groups: unknown[]): Promise<JobRun> {
  const started = performance.now();
  const { id: jobId } = await api("POST", "/v1/preview/training-jobs", { model_id: modelId, trajectory_groups: groups, ...(ROW ? { experimental_config: { packed_sequence_length: ROW } } : {}) });
  const steps: Record<string, number>[] = [];
  let after = "";
  for (;;) {
    const page = await api("GET", `/v1/preview/training-jobs/${jobId}/events?limit=100${after ? `&after=${after}` : ""}`);
    for (const event of page.data as { id: string; type: string; data: Record<string, unknown> }[]) {
      after = event.id;
      if (event.type === "gradient_step") steps.push(event.data as Record<string, number>);
      if (event.type === "training_failed") throw new Error(`the job failed: ${JSON.stringify(event.data)}`);
      if (event.type === "training_ended") {
        const stepSeconds = steps.reduce((sum, step) => sum + step.num_trainable_tokens! / step.tokens_per_second!, 0);
        return { seconds: (performance.now() - started) / 1000, steps, stepSeconds };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function peakMemoryMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

try {
  for (let started = Date.now(); ; ) {
    if (
      await fetch(`${base}/health`).then(
        (res) => res.ok,
        () => false,
      )
    )
      break;
    if (Date.now() - started > 60_000) throw new Error("the server did not start");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const { id: modelId } = await api("POST", "/v1/preview/models", { project: "bench", name: "rl", base_model: baseModel });
  const rng = Rng.fromSeed(11);
  const token = () => 3 + (rng.nextUint32() % (model.tokenizerSize - 3));
  const groups = Array.from({ length: GROUPS }, (_, g) => ({
    trajectories: Array.from({ length: GROUP_SIZE }, () => {
      const ids = Array.from({ length: TOKENS }, token);
      return {
        messages_and_choices: [
          { role: "user", content: `Question ${g}: what comes next?` },
          { finish_reason: "length", index: 0, message: { role: "assistant", content: "…" }, logprobs: { content: ids.map((id) => ({ token: `token_id:${id}`, logprob: -1, bytes: [], top_logprobs: [] })) } },
        ],
        reward: rng.nextFloat(),
      };
    }),
  }));
  const trainedTokens = GROUPS * GROUP_SIZE * TOKENS;
  console.log(
    `RL job over HTTP: ${big ? "Qwen2.5-0.5B's shapes (bf16)" : "qwen2 ~4M (hidden 256, 4 layers, vocab 2048)"}, ${GROUPS} groups × ${GROUP_SIZE} completions × ${TOKENS} tokens = ${trainedTokens} trained tokens${ROW ? ` in rows of ${ROW}` : ""}; ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  const row = (label: string, job: JobRun) => `| ${label} | ${job.steps.length} | ${job.seconds.toFixed(1)} | ${(trainedTokens / job.seconds).toFixed(0)} | ${(trainedTokens / job.stepSeconds).toFixed(0)} |`;
  const cold = await runJob(modelId as string, groups);
  const warm = await runJob(modelId as string, groups);
  console.log(`| job | steps | seconds, POST to training_ended | trained tokens/s, whole job | tokens/s inside the steps |`);
  console.log(`|---|---:|---:|---:|---:|`);
  console.log(row("first (loads the model into the trainer thread)", cold));
  console.log(row("second", warm));
  const stepSeconds = (job: JobRun) => job.steps.map((step) => (step.num_trainable_tokens! / step.tokens_per_second!).toFixed(2)).join(" ");
  console.log(`\nEach step's seconds, first job: ${stepSeconds(cold)}; second job: ${stepSeconds(warm)}`);
  console.log(`\nPeak server memory (VmHWM): ${peakMemoryMiB(server.pid!).toFixed(0)} MiB`);
} finally {
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
