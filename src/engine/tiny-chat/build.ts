import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeFloats, type FloatDType } from "../checkpoint/dtype.js";
import { loadNativeKernels } from "../kernels/native-loader.js";
import { selectKernels } from "../kernels/select.js";
import type { Kernels } from "../kernels/types.js";
import { loadModel, loadModelFiles } from "../model/load.js";
import { modelTemplateDeps } from "../train/job/template-deps.js";
import { Trainer } from "../train/trainer.js";
import { modelParameters, type NamedParameter } from "../train/transformer/model-gradients.js";
import { generateExamples } from "./dataset.js";
import { accuracyByTask, evaluateExamples, type TaskAccuracy } from "./evaluate.js";
import { TASK_NAMES, type TaskName, type TinyChatExample } from "./examples.js";
import { initialTensors, type TinyChatShape, tinyChatConfig, writeModelDir } from "./model-init.js";
import { type NameProbeReport, probeNameCopying } from "./name-probe.js";
import { tinyChatTokenizerFiles } from "./tokenizer.js";
import { runTraining, type TrainSchedule } from "./train-loop.js";
import { tokenizeExamples, type TrainingRow } from "./training-data.js";

export interface BuildOptions {
  outDir: string;
  seed: number;
  shape: TinyChatShape;
  bpeVocabSize: number;
  schedule: TrainSchedule;
  /** Held-out examples evaluated per task (a fifth of that for the untrained baseline, half of it per name probe). */
  evalExamplesPerTask: number;
  dtype: "f32" | "f16" | "bf16";
  /** Kernel threads of training and evaluation. */
  threads: number;
  log: (line: string) => void;
}

export interface BuildReport {
  seed: number;
  parameters: number;
  trainExamples: number;
  trainTokens: number;
  trainSeconds: number;
  /** CPU time of training, all threads: what it costs on an idle machine, whatever else shares this one. */
  trainCpuSeconds: number;
  finalLoss: number;
  heldOut: Partial<Record<TaskName, TaskAccuracy>>;
  /** Names no training example holds, copied from the prompt (`name-probe.ts`). */
  names: NameProbeReport;
  untrainedBaseline: Partial<Record<TaskName, TaskAccuracy>>;
}

const SAFETENSORS_DTYPE: Record<BuildOptions["dtype"], FloatDType> = { f32: "F32", f16: "F16", bf16: "BF16" };
const TORCH_DTYPE: Record<BuildOptions["dtype"], string> = { f32: "float32", f16: "float16", bf16: "bfloat16" };

/** `count` held-out examples of each task, from the held-out stream of the seed. */
export function heldOutExamples(seed: number, count: number): TinyChatExample[] {
  return TASK_NAMES.flatMap((task) => generateExamples({ seed, count, split: "heldout", tasks: [task] }));
}

/**
 * Builds flywheel/tiny-chat from a seed: generates the synthetic training set, trains the
 * tokenizer on it, initialises a qwen2 model, trains every weight with the project's trainer,
 * writes the checkpoint in Hugging Face layout (`outDir`), and measures held-out accuracy per task
 * through the engine, greedy, for the trained model and for its untrained initialisation.
 */
export async function buildTinyChat(options: BuildOptions): Promise<BuildReport> {
  const { seed, shape, schedule, log } = options;
  const examples = generateExamples({ seed, count: schedule.steps * schedule.examplesPerStep, split: "train" });
  log(`generated ${examples.length} training examples (seed ${seed})`);
  const tokenizer = tinyChatTokenizerFiles(examples.slice(0, 8000), options.bpeVocabSize, shape.maxPositionEmbeddings);
  const config = tinyChatConfig(shape, tokenizer);
  log(`trained the tokenizer: ${tokenizer.size} tokens (vocab_size ${config.vocab_size})`);

  // The server's choice of backend (native unless unavailable or FLYWHEEL_KERNELS=ts), on the recipe's thread count.
  const kernels = selectKernels({ loadNative: () => loadNativeKernels({ threads: options.threads }), warn: log });
  const initialDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-tiny-chat-init-"));
  try {
    writeModelDir(initialDir, { config, tokenizer, tensors: initialTensors(shape, config.vocab_size as number, seed) });
    const baselineCount = Math.max(1, Math.floor(options.evalExamplesPerTask / 5));
    const untrainedBaseline = accuracyByTask(await evaluateExamples(loadModel(initialDir, { kernels }), heldOutExamples(seed, baselineCount), { maxTokens: 48 }));
    log(`untrained baseline: ${formatAccuracy(untrainedBaseline)}`);

    const rows = tokenizeExamples(examples, modelTemplateDeps(loadModelFiles(initialDir)));
    const trained = await trainWeights(initialDir, kernels, rows, options);

    const dtype = SAFETENSORS_DTYPE[options.dtype];
    const tensors = trained.parameters.map(({ name, shape: dims, values }) => ({ name, dtype, shape: dims, data: encodeFloats(dtype, values) }));
    fs.rmSync(options.outDir, { recursive: true, force: true });
    writeModelDir(options.outDir, { config: { ...config, torch_dtype: TORCH_DTYPE[options.dtype] }, tokenizer, tensors });
    log(`wrote ${options.outDir}`);

    // The checkpoint as written (16-bit weights), not the f32 weights of training.
    const written = loadModel(options.outDir, { kernels });
    const heldOut = accuracyByTask(await evaluateExamples(written, heldOutExamples(seed, options.evalExamplesPerTask)));
    log(`held-out accuracy: ${formatAccuracy(heldOut)}`);
    const names = await probeNameCopying(written, seed, Math.ceil(options.evalExamplesPerTask / 2));
    log(
      `names never trained, greeting / recall: ${Object.entries(names)
        .map(([probe, { greeting, recall }]) => `${probe} ${greeting.correct}/${recall.correct} of ${recall.total}`)
        .join(", ")}`,
    );
    const parameterCount = trained.parameters.reduce((sum, { values }) => sum + values.length, 0);
    return {
      seed,
      parameters: parameterCount,
      trainExamples: examples.length,
      trainTokens: trained.tokens,
      trainSeconds: trained.seconds,
      trainCpuSeconds: trained.cpuSeconds,
      finalLoss: trained.finalLoss,
      heldOut,
      names,
      untrainedBaseline,
    };
  } finally {
    fs.rmSync(initialDir, { recursive: true, force: true });
  }
}

/** Trains every weight of the checkpoint in `dir` on the rows; returns them with what training took. */
async function trainWeights(dir: string, kernels: Kernels, rows: TrainingRow[], options: BuildOptions): Promise<{ parameters: NamedParameter[]; tokens: number; seconds: number; cpuSeconds: number; finalLoss: number }> {
  const { schedule, log } = options;
  const model = loadModel(dir, { kernels });
  const trainer = new Trainer(model.transformer, "full");
  log(`training ${(trainer.parameterCount / 1e6).toFixed(2)}M parameters on ${kernels.name} kernels, ${options.threads} thread(s): ${schedule.steps} steps of ${schedule.examplesPerStep} examples`);
  let [tokens, finalLoss] = [0, 0];
  const started = performance.now();
  // The process's CPU time covers the kernel pool's threads too.
  const cpuStarted = process.cpuUsage();
  await runTraining(trainer, rows, schedule, (step) => {
    tokens += step.tokens;
    finalLoss = step.loss;
    if (step.step % 50 === 0 || step.step === schedule.steps - 1) {
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuStarted);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      const remaining = (seconds / (step.step + 1)) * (schedule.steps - step.step - 1);
      log(
        `step ${step.step + 1}/${schedule.steps}  loss ${step.loss.toFixed(4)}  lr ${step.learningRate.toExponential(2)}  grad norm ${step.gradNorm.toFixed(3)}  ${(tokens / seconds).toFixed(0)} tokens/s (${(tokens / cpuSeconds).toFixed(0)} per CPU-second)  about ${Math.ceil(remaining / 60)} min left`,
      );
    }
  });
  const cpu = process.cpuUsage(cpuStarted);
  return { parameters: modelParameters(model.transformer), tokens, seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, finalLoss };
}

export function formatAccuracy(byTask: Partial<Record<TaskName, TaskAccuracy>>): string {
  return Object.entries(byTask)
    .map(([task, { correct, total }]) => `${task} ${correct}/${total}`)
    .join(", ");
}
