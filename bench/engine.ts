/**
 * Engine benchmark: Flywheel's model core (native and TypeScript kernels) beside llama.cpp on the
 * same weights at the same precision, in one run: single-stream decode tokens/s, aggregate decode
 * tokens/s of 8 streams, prefill tokens/s. Run with `npm run bench:engine [-- options]`:
 *
 *   --dtype f16|bf16     weight precision on both sides (default bf16, Qwen2.5's own)
 *   --threads N[,M]      threads for both engines, one group of runs per count (default: the machine's parallelism)
 *   --engines LIST       comma-separated of native, native-bf16, ts, llama.cpp (default native, ts, llama.cpp);
 *                        native-bf16 is the native kernels under FLYWHEEL_FORWARD_PRECISION=bf16 (bf16-rounded
 *                        activations times bf16 weights, f32 sums: what llama.cpp computes for bf16 weights on
 *                        CPUs with AVX-512 BF16), where the CPU has it
 *   --repeats N          runs per measurement, alternating between engines; tables of the best and the median (default 5)
 *   --prompt N           prefill prompt length (default 512); --steps N decode steps (default 64)
 *   --baseline-addon F   also run the native kernels of another build of the addon (a .node file), as
 *                        engine "baseline": before/after numbers of a kernel change in one run
 *
 * The model (random weights, Qwen2.5-0.5B's shapes) and node-llama-cpp are installed on first use
 * into bench/.cache (git-ignored). Not a test: numbers depend on the machine and its load.
 */
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type { KernelAddon } from "../src/engine/kernels/native/addon.js";
import { NativeKernels } from "../src/engine/kernels/native/index.js";
import { loadNativeKernels } from "../src/engine/kernels/native-loader.js";
import { TsKernels } from "../src/engine/kernels/ts/index.js";
import { SeededRandom } from "../src/engine/fixtures/random.js";
import type { BenchEngine } from "./engine/engines.js";
import { FlywheelEngine } from "./engine/flywheel.js";
import { ensureNodeLlamaCpp, LlamaCppEngine, NODE_LLAMA_CPP_VERSION } from "./engine/llama-cpp.js";
import { type BenchDType, ensureBenchModel, QWEN25_05B_SHAPES } from "./engine/model.js";
import { type Agreement, agreementLines, markdownTable, type Measured } from "./engine/report.js";

const STREAMS = 8;
const cacheDir = path.join(import.meta.dirname, ".cache");

const { values } = parseArgs({
  options: {
    dtype: { type: "string", default: "bf16" },
    threads: { type: "string", default: String(os.availableParallelism()) },
    engines: { type: "string", default: "native,ts,llama.cpp" },
    repeats: { type: "string", default: "5" },
    prompt: { type: "string", default: "512" },
    steps: { type: "string", default: "64" },
    "baseline-addon": { type: "string" },
  },
});
const dtype = values.dtype as BenchDType;
if (dtype !== "f16" && dtype !== "bf16") throw new Error(`--dtype must be f16 or bf16, got ${dtype}`);
const threadCounts = values.threads.split(",").map(Number);
const repeats = Number(values.repeats);
const promptLength = Number(values.prompt);
const steps = Number(values.steps);
const engineNames = values.engines.split(",");
const baselineAddon = values["baseline-addon"];
if (baselineAddon) engineNames.splice(engineNames.indexOf("native") + 1, 0, "baseline");
const log = (line: string) => console.error(`[bench] ${line}`);

const model = ensureBenchModel(cacheDir, dtype, log);
const random = new SeededRandom(2025);
const prompt = (length: number) => Array.from({ length }, () => random.nextUint32() % model.tokenizerSize);
const shortPrompts = Array.from({ length: STREAMS }, () => prompt(32));
const longPrompt = prompt(promptLength);

interface Scale {
  prompt: number;
  steps: number;
  repeats: number;
}
// The TypeScript kernels are ~100× slower: a shorter prompt, fewer steps and one run keep the benchmark in minutes.
const scaleOf = (name: string): Scale => (name === "ts" ? { prompt: 64, steps: 4, repeats: 1 } : { prompt: promptLength, steps, repeats });

async function loadEngine(name: string, threads: number): Promise<BenchEngine> {
  if (name === "native") return new FlywheelEngine(`Flywheel, native kernels, ${threads} thread${threads > 1 ? "s" : ""}`, model.dir, loadNativeKernels({ threads }));
  if (name === "native-bf16") {
    const kernels = loadNativeKernels({ threads, env: { ...process.env, FLYWHEEL_FORWARD_PRECISION: "bf16" } });
    if (kernels.forwardPrecision !== "bf16") throw new Error("engine native-bf16: this CPU has no AVX-512 BF16");
    return new FlywheelEngine(`Flywheel, native kernels, bf16 products, ${threads} thread${threads > 1 ? "s" : ""}`, model.dir, kernels);
  }
  if (name === "baseline") {
    const addon = createRequire(import.meta.url)(path.resolve(baselineAddon!)) as KernelAddon;
    return new FlywheelEngine(`Flywheel, baseline native build, ${threads} thread${threads > 1 ? "s" : ""}`, model.dir, new NativeKernels(addon, { threads }));
  }
  if (name === "ts") return new FlywheelEngine("Flywheel, TypeScript kernels, 1 thread", model.dir, new TsKernels());
  if (name === "llama.cpp") {
    const entry = ensureNodeLlamaCpp(path.join(cacheDir, "llama-cpp"), log);
    const llama = await LlamaCppEngine.load(entry, model.gguf, threads, STREAMS);
    systemInfo = llama.systemInfo;
    return llama;
  }
  throw new Error(`unknown engine ${name} (native, native-bf16, ts, llama.cpp)`);
}

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { best: sorted[sorted.length - 1]!, median: sorted[Math.floor(sorted.length / 2)]! };
};

let systemInfo = "";
const loadBefore = os.loadavg();
const results: Measured[] = [];
const checks: Agreement[] = [];
for (const threads of threadCounts) {
  const engines = [];
  for (const name of engineNames) {
    if (name === "ts" && threads !== threadCounts[0]) continue;
    log(`loading ${name}${name === "ts" ? "" : ` (${threads} threads)`}`);
    engines.push({ name, engine: await loadEngine(name, threads), scale: scaleOf(name), samples: { decode: [] as number[], together: [] as number[], prefill: [] as number[] } });
  }
  if (threads === threadCounts[0]) {
    for (const { name, engine } of engines) {
      checks.push({ name: engine.name, greedy: await engine.greedy(shortPrompts[1]!, name === "ts" ? 4 : 16), top: await engine.topLogits(shortPrompts[1]!, 10) });
    }
  }
  // Runs alternate between engines, so a burst of load from elsewhere hits them alike.
  for (let run = 0; run < repeats; run++) {
    for (const { engine, scale, samples } of engines) {
      if (run >= scale.repeats) continue;
      samples.decode.push(scale.steps / (await engine.decode(shortPrompts[0]!, scale.steps)));
      samples.together.push((STREAMS * scale.steps) / (await engine.decodeTogether(shortPrompts, scale.steps)));
      const longOne = longPrompt.slice(0, scale.prompt);
      samples.prefill.push(longOne.length / (await engine.prefill(longOne)));
    }
    log(`run ${run + 1} of ${repeats} done (${threads} threads), load ${os.loadavg()[0]!.toFixed(2)}`);
  }
  for (const { engine, scale, samples } of engines) {
    const [decode, together, prefill] = [stats(samples.decode), stats(samples.together), stats(samples.prefill)];
    results.push({
      engine: engine.name,
      group: threads,
      best: { decode: decode.best, together: together.best, prefill: prefill.best },
      median: { decode: decode.median, together: together.median, prefill: prefill.median },
      promptLength: scale.prompt,
      steps: scale.steps,
      repeats: scale.repeats,
    });
    await engine.close();
  }
}
const loadAfter = os.loadavg();

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(`## Engine benchmark, ${new Date().toISOString().slice(0, 10)}\n`);
console.log(`Model: qwen2 with Qwen2.5-0.5B's shapes (${QWEN25_05B_SHAPES.numLayers} layers, hidden ${QWEN25_05B_SHAPES.hiddenSize}, vocab ${QWEN25_05B_SHAPES.vocabSize}), random weights, ${dtype} on both sides.`);
console.log(
  `Machine: ${cpu}, ${os.availableParallelism()} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; llama.cpp from node-llama-cpp ${NODE_LLAMA_CPP_VERSION}${systemInfo ? ` (${systemInfo.trim().replace(/\s*\|\s*$/, "")})` : ""}.`,
);
console.log(`Load average (1/5/15 min): ${loadBefore.map((v) => v.toFixed(2)).join(" / ")} before, ${loadAfter.map((v) => v.toFixed(2)).join(" / ")} after.\n`);
for (const statistic of ["best", "median"] as const) {
  console.log(`${statistic === "best" ? "Best" : "Median"} of ${repeats} runs:\n`);
  for (const threads of threadCounts)
    console.log(
      markdownTable(
        results.filter((r) => r.group === threads),
        STREAMS,
        statistic,
      ),
      "\n",
    );
}
for (const line of agreementLines(checks)) console.log(line);
