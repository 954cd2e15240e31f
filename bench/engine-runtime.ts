/**
 * Aggregate decode throughput through the runtime: 1, 8 and 16 concurrent greedy streams through a
 * `LocalEngine` (engine thread, continuous batching, messages per step), next to the same batch
 * run as bare `Transformer.forward` calls on this thread (the model math alone). The gap is what
 * the runtime costs: scheduling, sampling, detokenizing, messages between threads.
 *
 *   npx tsx bench/engine-runtime.ts            # BENCH_TOKENS=64 BENCH_PROMPT=32 BENCH_HIDDEN=512 BENCH_LAYERS=8
 *
 * The model is a random qwen2-shaped checkpoint written once under bench/.cache/. Kernels follow
 * FLYWHEEL_KERNELS (native when built). Not a test: numbers depend on the machine and its load.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { GenerateEvent } from "../src/engine/api.js";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { loadModel } from "../src/engine/model/load.js";
import { LocalEngine } from "../src/engine/runtime/local-engine.js";
import { defaultSamplingParams } from "../src/engine/sampling/params.js";
import { argmax } from "../src/engine/sampling/select.js";
import { describeMachine } from "./machine.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const TOKENS = env("BENCH_TOKENS", 64);
const PROMPT = env("BENCH_PROMPT", 32);
const shape = { hiddenSize: env("BENCH_HIDDEN", 512), numLayers: env("BENCH_LAYERS", 8), numHeads: 8, numKvHeads: 2, intermediateSize: 3 * env("BENCH_HIDDEN", 512) };
const CONCURRENCY = [1, 8, 16];

const cacheDir = path.join(path.dirname(fileURLToPath(import.meta.url)), ".cache", `runtime-qwen2-h${shape.hiddenSize}-l${shape.numLayers}`);
if (!fs.existsSync(path.join(cacheDir, "config.json"))) makeTinyModel(cacheDir, { architecture: "qwen2", seed: 1, ...shape });

const prompts = (count: number) => Array.from({ length: count }, (_, s) => Array.from({ length: PROMPT }, (_, i) => 10 + ((s * 31 + i * 7) % 500)));

/** The batch as bare forward passes on this thread: prefill, then TOKENS greedy steps. */
function bareForward(count: number): number {
  const { transformer } = model;
  const caches = prompts(count).map(() => transformer.createCache(PROMPT + TOKENS));
  const start = performance.now();
  let logits = transformer.forward(prompts(count).map((tokens, i) => ({ cache: caches[i]!, tokens })));
  for (let step = 1; step < TOKENS; step++) logits = transformer.forward(logits.map((row, i) => ({ cache: caches[i]!, tokens: [argmax(row!)] })));
  return (count * TOKENS) / ((performance.now() - start) / 1000);
}

async function throughEngine(engine: LocalEngine, count: number): Promise<{ tokensPerSecond: number; firstToken: number }> {
  const start = performance.now();
  let firstToken = 0;
  const streams = prompts(count).map(async (promptTokenIds, i) => {
    let tokens = 0;
    const events: AsyncIterable<GenerateEvent> = engine.generate({
      requestId: `bench-${count}-${i}-${Math.random()}`,
      promptTokenIds,
      params: defaultSamplingParams({ temperature: 0, maxTokens: TOKENS, ignoreEos: true }),
      cacheSalt: `${Math.random()}`,
    });
    for await (const event of events) {
      if (event.type !== "output") continue;
      if (tokens === 0 && i === 0) firstToken = performance.now() - start;
      tokens += event.tokens.length;
    }
    return tokens;
  });
  const total = (await Promise.all(streams)).reduce((sum, tokens) => sum + tokens, 0);
  return { tokensPerSecond: total / ((performance.now() - start) / 1000), firstToken };
}

const model = loadModel(cacheDir);
const engine = await LocalEngine.start({ id: "bench", dir: cacheDir, scheduler: { maxRunningSequences: 16, prefixCacheBytes: 0 } });
console.log(`runtime benchmark: qwen2 hidden ${shape.hiddenSize}, ${shape.numLayers} layers, kernels ${model.transformer.kernels.name}, prompt ${PROMPT}, ${TOKENS} tokens per stream`);
console.log(`machine: ${describeMachine()}`);
// Warm-up of both paths (JIT, caches).
bareForward(2);
await throughEngine(engine, 2);
console.log("streams | engine tokens/s | bare forward tokens/s | engine / bare | first token (ms)");
for (const count of CONCURRENCY) {
  const bare = bareForward(count);
  const run = await throughEngine(engine, count);
  console.log(
    `${String(count).padStart(7)} | ${run.tokensPerSecond.toFixed(1).padStart(15)} | ${bare.toFixed(1).padStart(21)} | ${(run.tokensPerSecond / bare).toFixed(2).padStart(13)} | ${run.firstToken.toFixed(0).padStart(16)}`,
  );
}
await engine.close();
