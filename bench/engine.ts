/**
 * Engine benchmark: Flywheel's model core (native and TypeScript kernels) beside llama.cpp on the
 * same weights at the same precision, in one run: single-stream decode tokens/s, aggregate decode
 * tokens/s of 8 streams, prefill tokens/s. Run with `npm run bench:engine [-- options]`:
 *
 *   --dtype f16|bf16     weight precision on both sides (default bf16, Qwen2.5's own)
 *   --threads N          threads for both engines (default: the machine's available parallelism)
 *   --engines LIST       comma-separated of native, ts, llama.cpp (default all three)
 *   --repeats N          runs per measurement; the table shows the median (default 3)
 *   --prompt N           prefill prompt length (default 512); --steps N decode steps (default 64)
 *
 * The model (random weights, Qwen2.5-0.5B's shapes) and node-llama-cpp are installed on first use
 * into bench/.cache (git-ignored). Not a test: numbers depend on the machine and its load.
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadNativeKernels } from "../src/engine/kernels/native-loader.js";
import { TsKernels } from "../src/engine/kernels/ts/index.js";
import { SeededRandom } from "../src/engine/fixtures/random.js";
import type { BenchEngine } from "./engine/engines.js";
import { FlywheelEngine } from "./engine/flywheel.js";
import { ensureNodeLlamaCpp, LlamaCppEngine, NODE_LLAMA_CPP_VERSION } from "./engine/llama-cpp.js";
import { type BenchDType, ensureBenchModel, QWEN25_05B_SHAPES } from "./engine/model.js";
import { agreementLines, markdownTable, type Measured } from "./engine/report.js";

const STREAMS = 8;
const cacheDir = path.join(import.meta.dirname, ".cache");

const { values } = parseArgs({
  options: {
    dtype: { type: "string", default: "bf16" },
    threads: { type: "string", default: String(os.availableParallelism()) },
    engines: { type: "string", default: "native,ts,llama.cpp" },
    repeats: { type: "string", default: "3" },
    prompt: { type: "string", default: "512" },
    steps: { type: "string", default: "64" },
  },
});
const dtype = values.dtype as BenchDType;
if (dtype !== "f16" && dtype !== "bf16") throw new Error(`--dtype must be f16 or bf16, got ${dtype}`);
const threads = Number(values.threads);
const repeats = Number(values.repeats);
const promptLength = Number(values.prompt);
const steps = Number(values.steps);
const engines = values.engines.split(",");
const log = (line: string) => console.error(`[bench] ${line}`);

const model = ensureBenchModel(cacheDir, dtype, log);
const random = new SeededRandom(2025);
const prompt = (length: number) => Array.from({ length }, () => random.nextUint32() % model.tokenizerSize);
const shortPrompts = Array.from({ length: STREAMS }, () => prompt(32));
const longPrompt = prompt(promptLength);

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

/** Runs each measurement `repeats` times and reports tokens/s of the median run. */
async function measure(engine: BenchEngine, scale: { prompt: number; steps: number; repeats: number }): Promise<Measured> {
  const decode: number[] = [];
  const together: number[] = [];
  const prefill: number[] = [];
  const longOne = longPrompt.slice(0, scale.prompt);
  for (let run = 0; run < scale.repeats; run++) {
    decode.push(scale.steps / (await engine.decode(shortPrompts[0]!, scale.steps)));
    together.push((STREAMS * scale.steps) / (await engine.decodeTogether(shortPrompts, scale.steps)));
    prefill.push(longOne.length / (await engine.prefill(longOne)));
  }
  return { engine: engine.name, decode: median(decode), together: median(together), prefill: median(prefill), promptLength: longOne.length, steps: scale.steps, repeats: scale.repeats };
}

const loadBefore = os.loadavg();
const results: Measured[] = [];
const checks: { name: string; greedy: number[]; logits: number[] }[] = [];
const probe = shortPrompts[1]!;
const probeTokens = Array.from({ length: 64 }, (_, i) => (i * 2371) % QWEN25_05B_SHAPES.vocabSize);
let systemInfo = "";

for (const name of engines) {
  let engine: BenchEngine;
  if (name === "native") engine = new FlywheelEngine(`Flywheel (native kernels, ${threads} threads)`, model.dir, loadNativeKernels({ threads }));
  else if (name === "ts") engine = new FlywheelEngine("Flywheel (TypeScript kernels, 1 thread)", model.dir, new TsKernels());
  else if (name === "llama.cpp") {
    const entry = ensureNodeLlamaCpp(path.join(cacheDir, "llama-cpp"), log);
    const llama = await LlamaCppEngine.load(entry, model.gguf, threads, STREAMS);
    systemInfo = llama.systemInfo;
    engine = llama;
  } else throw new Error(`unknown engine ${name} (native, ts, llama.cpp)`);
  log(`${engine.name}: checking output, then measuring`);
  const greedy = await engine.greedy(probe, name === "ts" ? 4 : 16);
  checks.push({ name: engine.name, greedy, logits: await engine.logits(probe, probeTokens) });
  // The TypeScript kernels are ~100× slower: a shorter prompt, fewer steps and one run keep the benchmark in minutes.
  const scale = name === "ts" ? { prompt: 64, steps: 4, repeats: 1 } : { prompt: promptLength, steps, repeats };
  results.push(await measure(engine, scale));
  log(`${engine.name}: ${JSON.stringify(results.at(-1))}`);
  await engine.close();
}
const loadAfter = os.loadavg();

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(`## Engine benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(`Model: qwen2 with Qwen2.5-0.5B's shapes (${QWEN25_05B_SHAPES.numLayers} layers, hidden ${QWEN25_05B_SHAPES.hiddenSize}, vocab ${QWEN25_05B_SHAPES.vocabSize}), random weights, ${dtype} on both sides.`);
console.log(`Machine: ${cpu}, ${os.availableParallelism()} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; ${threads} threads per engine; llama.cpp from node-llama-cpp ${NODE_LLAMA_CPP_VERSION}${systemInfo ? ` (${systemInfo.trim().replace(/\s*\|\s*$/, "")})` : ""}.`);
console.log(`Load average (1/5/15 min): ${loadBefore.map((v) => v.toFixed(2)).join(" / ")} before, ${loadAfter.map((v) => v.toFixed(2)).join(" / ")} after.\n`);
console.log(markdownTable(results, STREAMS));
console.log("");
for (const line of agreementLines(checks)) console.log(line);
