/**
 * Time to compute a structured-output token mask per decode step, for a vocabulary of real size
 * (150,000 tokens, logits padded to 151,936 as in Qwen2). Run: npx tsx bench/structured-mask.ts
 * (BENCH_STEPS decode steps per constraint, default 400).
 */
import { StructuredOutputs } from "../src/engine/structured/structured-outputs.js";
import type { StructuredConstraint } from "../src/engine/structured/types.js";
import { biasTowards, seededRandom } from "../src/testing/constrained-walk.js";
import { syntheticTokenizer } from "../src/testing/synthetic-vocabulary.js";

const WIDTH = 151_936;
const STEPS = Number(process.env.BENCH_STEPS ?? 400);

const constraints: [string, StructuredConstraint][] = [
  ["json_object", { kind: "json_object" }],
  [
    "json_schema",
    {
      kind: "json_schema",
      schema: { type: "object", properties: { name: { type: "string", maxLength: 40 }, age: { type: "integer", minimum: 0, maximum: 150 }, tags: { type: "array", items: { type: "string" } } }, required: ["name", "age", "tags"] },
    },
  ],
  ["regex", { kind: "regex", pattern: "[a-z]+(-[a-z]+)*@[a-z]+\\.(com|org|net)" }],
  ["choice", { kind: "choice", choices: ["positive", "negative", "neutral"] }],
];

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${sorted[sorted.length - 1]!.toFixed(3)} ms (${samples.length} steps)`;
}

let started = performance.now();
const tokenizer = syntheticTokenizer(150_000);
console.log(`synthetic vocabulary of ${tokenizer.vocabSize} tokens: ${(performance.now() - started).toFixed(0)} ms`);
started = performance.now();
const stops = [tokenizer.eosTokenId];
const outputs = await StructuredOutputs.create({ tokenizer, vocabSize: WIDTH, stopTokenIds: stops });
console.log(`xgrammar tokenizer tables: ${(performance.now() - started).toFixed(0)} ms`);
const bias = biasTowards(tokenizer, WIDTH, '"}]', 3, stops);
const logits = new Float32Array(WIDTH);

for (const [name, constraint] of constraints) {
  started = performance.now();
  await outputs.check(constraint);
  const compileMs = performance.now() - started;
  const maskMs: number[] = [];
  const applyMs: number[] = [];
  const random = seededRandom(7);
  let steps = 0;
  while (steps < STEPS) {
    const matcher = await outputs.createMatcher(constraint);
    while (steps < STEPS && !matcher.isTerminated) {
      let t = performance.now();
      const mask = await matcher.nextTokenMask();
      maskMs.push(performance.now() - t);
      for (let id = 0; id < WIDTH; id++) logits[id] = random() * 4 + bias[id]!;
      t = performance.now();
      mask.applyTo(logits);
      applyMs.push(performance.now() - t);
      let best = 0;
      for (let id = 1; id < WIDTH; id++) if (logits[id]! > logits[best]!) best = id;
      matcher.accept(best);
      steps++;
    }
    matcher.dispose();
  }
  console.log(`${name}: compile ${compileMs.toFixed(0)} ms; mask ${stats(maskMs)}; apply to logits ${stats(applyMs)}`);
}
outputs.dispose();
