import os from "node:os";
import path from "node:path";
import { bundledModelsDir } from "../config.js";
import { SUPPORTED_ARCHITECTURES, type Architecture } from "../engine/checkpoint/model-config.js";
import { type FixtureDType, makeTinyModel, type TinyModelOptions } from "../engine/fixtures/tiny-model.js";
import { describeCpu } from "../engine/kernels/cpu-model.js";
import { buildTinyChat, formatAccuracy } from "../engine/tiny-chat/build.js";
import { writeModelCard } from "../engine/tiny-chat/model-card.js";
import { TINY_CHAT_RECIPE, type TinyChatRecipe } from "../engine/tiny-chat/recipe.js";
import { parseCommandArgs, UsageError } from "./args.js";
import { exportGgufCommand, exportGgufUsage } from "./models-export-gguf.js";

export const modelsUsage = `flywheel models make-tiny --arch llama|qwen2|qwen3 --out DIR [--seed N] [--dtype f32|f16|bf16]
    [--shards N] [--hidden N] [--layers N] [--heads N] [--kv-heads N] [--head-dim N]
    [--intermediate N] [--bpe-vocab N] [--vocab N] [--max-positions N] [--tie-embeddings true|false]
  writes a small random model in Hugging Face layout (deterministic for a seed)
${exportGgufUsage}

flywheel models build-tiny-chat [--out DIR] [--seed N] [--steps N] [--examples-per-step N]
    [--threads N] [--eval-examples N]
  generates tiny-chat's synthetic data, trains its tokenizer and weights from scratch, evaluates
  held-out accuracy per task and writes the model (default: the bundled models/flywheel/tiny-chat);
  \`npm run model:build\` runs it with the committed recipe`;

const SIZE_FLAGS = {
  hidden: "hiddenSize",
  layers: "numLayers",
  heads: "numHeads",
  "kv-heads": "numKvHeads",
  "head-dim": "headDim",
  intermediate: "intermediateSize",
  "bpe-vocab": "bpeVocabSize",
  vocab: "vocabSize",
  "max-positions": "maxPositionEmbeddings",
  shards: "shards",
} as const satisfies Record<string, keyof TinyModelOptions>;

export async function modelsCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === "build-tiny-chat") return buildTinyChatCommand(rest);
  if (action === "export-gguf") return exportGgufCommand(rest);
  if (action !== "make-tiny") throw new UsageError(modelsUsage);
  const stringOptions = Object.fromEntries([...Object.keys(SIZE_FLAGS), "arch", "out", "seed", "dtype", "tie-embeddings"].map((name) => [name, { type: "string" as const }]));
  const { values } = parseCommandArgs(rest, stringOptions);
  const arch = values.arch;
  if (!arch || !(SUPPORTED_ARCHITECTURES as readonly string[]).includes(arch as string)) {
    throw new UsageError(`models make-tiny needs --arch ${SUPPORTED_ARCHITECTURES.join("|")}`);
  }
  if (!values.out) throw new UsageError("models make-tiny needs --out DIR");
  const dtype = (values.dtype ?? "f32") as string;
  if (!["f32", "f16", "bf16"].includes(dtype)) throw new UsageError(`--dtype must be f32, f16 or bf16, got '${dtype}'`);
  const options: TinyModelOptions = { architecture: arch as Architecture, dtype: dtype as FixtureDType, seed: integerFlag("seed", values.seed as string | undefined, 0) };
  for (const [flag, key] of Object.entries(SIZE_FLAGS)) {
    const value = integerFlag(flag, values[flag] as string | undefined, 1);
    if (value !== undefined) options[key] = value;
  }
  const tie = values["tie-embeddings"] as string | undefined;
  if (tie !== undefined) {
    if (tie !== "true" && tie !== "false") throw new UsageError(`--tie-embeddings must be true or false, got '${tie}'`);
    options.tieWordEmbeddings = tie === "true";
  }
  const dir = path.resolve(values.out as string);
  let model: ReturnType<typeof makeTinyModel>;
  try {
    model = makeTinyModel(dir, options);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { config } = model;
  console.log(`Wrote a ${arch} model (${config.num_hidden_layers} layers, hidden ${config.hidden_size}, vocab ${config.vocab_size}, ${dtype}) to ${dir}`);
}

function integerFlag(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${flag} must be an integer ≥ ${min}, got '${value}'`);
  return Number(value);
}

/** `models build-tiny-chat`: the committed recipe, with the overrides the flags give. */
async function buildTinyChatCommand(args: string[]): Promise<void> {
  const flags = ["out", "seed", "steps", "examples-per-step", "threads", "eval-examples"];
  const { values } = parseCommandArgs(args, Object.fromEntries(flags.map((name) => [name, { type: "string" as const }])));
  const flag = (name: string, min: number) => integerFlag(name, values[name] as string | undefined, min);
  const base = TINY_CHAT_RECIPE;
  const steps = flag("steps", 1) ?? base.schedule.steps;
  const recipe: TinyChatRecipe = {
    ...base,
    seed: flag("seed", 0) ?? base.seed,
    threads: flag("threads", 1) ?? base.threads,
    evalExamplesPerTask: flag("eval-examples", 1) ?? base.evalExamplesPerTask,
    schedule: { ...base.schedule, steps, examplesPerStep: flag("examples-per-step", 1) ?? base.schedule.examplesPerStep, warmupSteps: Math.min(base.schedule.warmupSteps, Math.ceil(steps / 10)) },
  };
  if (recipe.threads > os.availableParallelism()) console.log(`note: ${recipe.threads} training threads on ${os.availableParallelism()} CPUs`);
  const outDir = path.resolve((values.out as string | undefined) ?? path.join(bundledModelsDir, "flywheel", "tiny-chat"));
  const started = performance.now();
  const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}`);
  const report = await buildTinyChat({ ...recipe, outDir, log });
  const command = args.length === 0 ? "npm run model:build" : `flywheel models build-tiny-chat ${args.join(" ")}`;
  const machine = `${os.availableParallelism()} CPUs, ${describeCpu()}, Node ${process.versions.node}`;
  writeModelCard(outDir, recipe, report, { command, wallSeconds: (performance.now() - started) / 1000, machine });
  console.log(`Wrote flywheel/tiny-chat (${(report.parameters / 1e6).toFixed(2)}M parameters) to ${outDir}; held-out accuracy: ${formatAccuracy(report.heldOut)}`);
}
