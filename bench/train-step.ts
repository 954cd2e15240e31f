/**
 * Training-step benchmark: a qwen2-shaped fixture of a few million parameters (hidden 256,
 * 4 layers, 8 heads / 4 KV heads, intermediate 704) with a rank-8 LoRA on all linear layers,
 * trained on the TypeScript kernels. Reports tokens per second of an RL step on one packed row
 * (a shared prompt and 8 completions), of an SFT step on a batch of 2 sequences, of a
 * forward-only scoring pass, and of the same SFT step training every weight (full-parameter, as
 * `npm run model:build` trains tiny-chat). Run with `npx tsx bench/train-step.ts`; BENCH_ROW sets the row length.
 * Not a test: numbers depend on the machine and its load.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { TsKernels } from "../src/engine/kernels/ts/index.js";
import { createLoraAdapter } from "../src/engine/lora/init.js";
import { loadModel } from "../src/engine/model/load.js";
import { Rng } from "../src/engine/sampling/rng.js";
import { LoraTrainer } from "../src/engine/train/lora-trainer.js";
import { Trainer } from "../src/engine/train/trainer.js";
import { packTokenizedResults } from "../src/engine/train/packing.js";
import { resolveRlConfig, rlLossOptions } from "../src/engine/train/config.js";
import type { SftRow } from "../src/engine/train/sft-tokenize.js";
import type { TokenizedResult } from "../src/engine/train/tokenize-groups.js";

const ROW = Number(process.env.BENCH_ROW ?? 1024);
const STEPS = Number(process.env.BENCH_STEPS ?? 3);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-bench-train-"));
try {
  makeTinyModel(dir, { architecture: "qwen2", hiddenSize: 256, numLayers: 4, numHeads: 8, numKvHeads: 4, intermediateSize: 704, maxPositionEmbeddings: 4096 });
  const model = loadModel(dir, process.env.FLYWHEEL_KERNELS === "ts" ? { kernels: new TsKernels() } : {});
  const { config } = model;
  const parameters = countParameters(config);
  const adapter = createLoraAdapter(config, { seed: 1 });
  const trainer = new LoraTrainer(model.transformer, adapter);
  const rng = Rng.fromSeed(7);
  const token = () => 3 + (rng.nextUint32() % (config.vocabSize - 3));

  // RL: a 64-token prompt shared by 8 completions filling the row.
  const promptLength = 64;
  const completionLength = Math.floor((ROW - promptLength) / 8);
  const prompt = Array.from({ length: promptLength }, token);
  const results: TokenizedResult[] = Array.from({ length: 8 }, (_, i) => {
    const completion = Array.from({ length: completionLength }, token);
    return {
      tokenIds: [...prompt, ...completion],
      logprobs: [...prompt.map(() => NaN), ...completion.map(() => -6)],
      assistantMask: [...prompt.map(() => 0), ...completion.map(() => 1)],
      inputPos: Array.from({ length: promptLength + completionLength }, (_, p) => p),
      advantage: i % 2 ? 1 : -1,
      weight: 1 / completionLength,
      promptId: 1,
      promptLength: promptLength - 1,
      groupIndex: 0,
      trajectoryIndex: i,
    };
  });
  const row = packTokenizedResults(results, ROW, { padTokenId: 0, random: () => 0.5 }).rows[0]!;
  const options = rlLossOptions(resolveRlConfig({ learning_rate: 1e-4 }));

  // SFT: two sequences of half a row each, the second half of each trained.
  const sftRows: SftRow[] = [0, 1].map(() => {
    const tokens = Int32Array.from({ length: ROW / 2 }, token);
    const labels = tokens.map((id, p) => (p >= ROW / 4 ? id : -100));
    return { tokens, labels, numTrainableTokens: ROW / 4 };
  });

  console.log(`qwen2 fixture: ${(parameters / 1e6).toFixed(2)}M parameters, vocab ${config.vocabSize}, LoRA rank 8 on all linear layers (${adapter.parameters().reduce((n, t) => n + t.length, 0)} trainable)`);
  console.log(`row of ${row.length} tokens (${row.length - promptLength} trained), kernels ${model.transformer.kernels.name}\n`);
  report("forward only (logprobs)", row.length, () => trainer.logprobs(row));
  report("RL step (forward + backward + AdamW)", row.length, () => trainer.rlStep(row, { options }, 1e-4));
  report("SFT step, 2 × half-row sequences", ROW, () => trainer.sftStep({ rows: sftRows, learningRate: 1e-4 }));
  const full = new Trainer(model.transformer, "full");
  report("full-parameter SFT step, same batch", ROW, () => full.sftStep({ rows: sftRows, learningRate: 1e-5 }));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Wall time per step, and CPU time per step (what the step costs when the machine is shared). */
function report(name: string, tokens: number, run: () => unknown): void {
  run(); // warm-up: JIT and buffer growth
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  for (let i = 0; i < STEPS; i++) run();
  const seconds = (performance.now() - started) / 1000 / STEPS;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6 / STEPS;
  const line = `${name.padEnd(40)} ${(seconds * 1000).toFixed(0).padStart(7)} ms/step ${(tokens / seconds).toFixed(0).padStart(6)} tokens/s`;
  console.log(`${line}   (CPU ${(cpuSeconds * 1000).toFixed(0)} ms/step, ${(tokens / cpuSeconds).toFixed(0)} tokens per CPU-second)`);
}

function countParameters(config: ReturnType<typeof loadModel>["config"]): number {
  const { hiddenSize: h, intermediateSize: i, numHeads, numKvHeads, headDim, numLayers, vocabSize } = config;
  const perLayer = h * numHeads * headDim * 2 + 2 * h * numKvHeads * headDim + 3 * h * i + 2 * h;
  return numLayers * perLayer + vocabSize * h * (config.tieWordEmbeddings ? 1 : 2) + h;
}
