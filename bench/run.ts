/**
 * Runs the benchmarks one after another, each in a process of its own, and prints their output and
 * a summary. Quick by default (small sizes and few rounds: the whole set takes about a minute on
 * two cores and shows that every benchmark works); `--full` runs each with the settings
 * docs/benchmarks.md reports.
 *
 *   npm run bench                          # quick run of all but the engine benchmark
 *   npm run bench -- --full                # every benchmark at its documented size (long)
 *   npm run bench -- --only chat,trace     # a selection (names below), quick unless --full
 *
 * The engine benchmark (Flywheel beside llama.cpp) writes a 1 GB model and installs node-llama-cpp
 * on first use, so a quick run leaves it out unless named with --only (which runs it at full size).
 * The train benchmark makes its Python environment (transformers + PEFT) on first use.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";

interface Bench {
  name: string;
  file: string;
  what: string;
  /** Arguments and environment of the quick run. */
  quick: { args?: string[]; env?: Record<string, string> } | "skip";
  /** Arguments of the full run (the documented one). */
  full?: string[];
}

const BENCHES: Bench[] = [
  { name: "sampler", file: "sampler.ts", what: "µs per sampled token at Qwen2's vocabulary size", quick: { env: { BENCH_ITERATIONS: "30" } } },
  { name: "structured-mask", file: "structured-mask.ts", what: "structured-output token mask per decode step", quick: { env: { BENCH_STEPS: "50" } } },
  { name: "runtime", file: "engine-runtime.ts", what: "decode throughput at 1, 8 and 16 streams through the runtime", quick: { env: { BENCH_TOKENS: "16", BENCH_HIDDEN: "256", BENCH_LAYERS: "4" } } },
  { name: "chat", file: "chat.ts", what: "what HTTP adds to time to first token and per-token latency", quick: { env: { BENCH_ROUNDS: "2", BENCH_HIDDEN: "256", BENCH_LAYERS: "4" } } },
  { name: "trace", file: "trace.ts", what: "trace ingest calls/s and query latency at two store sizes", quick: { args: ["--calls", "5000", "--large", "20000", "--runs", "10"] } },
  { name: "trace-answer", file: "trace-answer.ts", what: "call rows to a query answer: parsed and re-serialized, or stored JSON spliced", quick: { env: { BENCH_CALLS: "10000", BENCH_ROUNDS: "1" } } },
  { name: "train-step", file: "train-step.ts", what: "tokens/s of one RL step, one SFT step and a scoring pass", quick: { env: { BENCH_ROW: "256", BENCH_STEPS: "1" } } },
  { name: "train-jobs", file: "train-jobs.ts", what: "whole SFT and RL jobs through the trainer thread", quick: { env: { BENCH_HIDDEN: "128", BENCH_LAYERS: "2", BENCH_RL_JOBS: "1" } } },
  { name: "train", file: "train-vs-pytorch.ts", what: "Flywheel's trainer beside transformers + PEFT on the same checkpoints and rows", quick: { args: ["--quick"] } },
  { name: "engine", file: "engine.ts", what: "decode and prefill beside llama.cpp on the same weights", quick: "skip", full: ["--threads", "2,1", "--repeats", "5"] },
];

const { values } = parseArgs({ options: { full: { type: "boolean", default: false }, only: { type: "string" } } });
const names = values.only
  ?.split(",")
  .map((name) => name.trim())
  .filter(Boolean);
const unknown = names?.filter((name) => !BENCHES.some((bench) => bench.name === name)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")}; known: ${BENCHES.map((bench) => bench.name).join(", ")}`);
  process.exit(2);
}
const selected = BENCHES.filter((bench) => (names ? names.includes(bench.name) : values.full || bench.quick !== "skip"));

function runOne(bench: Bench): Promise<{ code: number | null; seconds: number }> {
  const quick = bench.quick === "skip" ? {} : bench.quick;
  const args = values.full ? (bench.full ?? []) : (quick.args ?? bench.full ?? []);
  const env = values.full ? process.env : { ...process.env, ...quick.env };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, bench.file), ...args], { env, stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, seconds: (performance.now() - started) / 1000 }));
  });
}

const results: { bench: Bench; code: number | null; seconds: number }[] = [];
for (const bench of selected) {
  console.log(`\n## ${bench.name} (bench/${bench.file}${values.full ? "" : ", quick"}): ${bench.what}\n`);
  results.push({ bench, ...(await runOne(bench)) });
}
console.log(`\n## Summary (${values.full ? "full" : "quick"} run)\n\n| Benchmark | Result | Seconds |\n|---|---|---:|`);
for (const { bench, code, seconds } of results) console.log(`| ${bench.name} | ${code === 0 ? "ok" : `failed (exit ${code})`} | ${seconds.toFixed(1)} |`);
process.exitCode = results.every((result) => result.code === 0) ? 0 : 1;
