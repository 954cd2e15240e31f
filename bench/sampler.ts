/**
 * Micro-benchmark of the sampler at a real vocabulary size (Qwen2's 151,936 tokens): µs per
 * sampled token for the common configurations. Run with `npx tsx bench/sampler.ts`.
 * Not a test: numbers depend on the machine and its load.
 */
import { defaultSamplingParams, type SamplingParams } from "../src/engine/sampling/params.js";
import { Rng } from "../src/engine/sampling/rng.js";
import { Sampler } from "../src/engine/sampling/sampler.js";
import { SequenceState } from "../src/engine/sampling/sequence.js";

const VOCAB = 151_936;
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);

/** Logits shaped like a language model's: a broad normal body and a handful of strong candidates. */
function modelLikeLogits(rng: Rng): Float32Array {
  const logits = new Float32Array(VOCAB);
  for (let i = 0; i < VOCAB; i++) {
    const u = rng.nextFloat() || 1e-12;
    const v = rng.nextFloat();
    logits[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v) * 2.5;
  }
  for (let i = 0; i < 20; i++) logits[rng.nextUint32() % VOCAB] = 12 + rng.nextFloat() * 8;
  return logits;
}

const scenarios: { name: string; params: Partial<SamplingParams>; promptLength?: number; outputLength?: number }[] = [
  { name: "greedy", params: { temperature: 0 } },
  { name: "greedy + top 5 logprobs", params: { temperature: 0, logprobs: 5 } },
  { name: "temperature 1, no filters", params: { temperature: 1 } },
  { name: "top_p 0.95", params: { temperature: 0.7, topP: 0.95 } },
  { name: "top_k 50 + top_p 0.9", params: { temperature: 0.7, topK: 50, topP: 0.9 } },
  { name: "min_p 0.05 + top_k 20 + top_p 0.8", params: { temperature: 0.7, minP: 0.05, topK: 20, topP: 0.8 } },
  {
    name: "penalties + top 20 logprobs",
    params: { temperature: 0.7, topP: 0.9, repetitionPenalty: 1.1, frequencyPenalty: 0.5, presencePenalty: 0.5, logprobs: 20 },
    promptLength: 2000,
    outputLength: 500,
  },
];

const rng = Rng.fromSeed(2024);
const rows = Array.from({ length: 8 }, () => modelLikeLogits(rng));
const sampler = new Sampler(Rng.fromSeed(1));

console.log(`sampler micro-benchmark, vocabulary ${VOCAB}, ${ITERATIONS} samples per scenario (µs per sample; min is the least disturbed by other load)`);
for (const scenario of scenarios) {
  const prompt = Array.from({ length: scenario.promptLength ?? 200 }, () => rng.nextUint32() % VOCAB);
  const sequence = new SequenceState({
    params: defaultSamplingParams({ maxTokens: 1_000_000, seed: 7, ...scenario.params }),
    promptTokenIds: prompt,
    eosTokenId: 151_643,
  });
  for (let i = 0; i < (scenario.outputLength ?? 0); i++) sequence.append(rng.nextUint32() % VOCAB);
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS + 30; i++) {
    const logits = rows[i % rows.length]!;
    const start = process.hrtime.bigint();
    sampler.sample(sequence, logits);
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    if (i >= 30) times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  const median = times[times.length >> 1]!;
  const fastest = times[0]!;
  console.log(`${scenario.name.padEnd(38)} min ${fastest.toFixed(0).padStart(6)} µs   median ${median.toFixed(0).padStart(6)} µs`);
}
