import fs from "node:fs";
import path from "node:path";
import { CheckpointError } from "../engine/checkpoint/errors.js";
import { exportGguf, type GgufExportDType } from "../engine/gguf/export.js";
import { parseCommandArgs, UsageError } from "./args.js";

export const exportGgufUsage = `flywheel models export-gguf --model DIR --out FILE [--dtype f32|f16|bf16] [--name NAME]
  converts a llama/qwen2/qwen3 checkpoint directory to one GGUF file for llama.cpp
  (default precision: the checkpoint's own)`;

export async function exportGgufCommand(args: string[]): Promise<void> {
  const options = Object.fromEntries(["model", "out", "dtype", "name"].map((name) => [name, { type: "string" as const }]));
  const { values } = parseCommandArgs(args, options);
  const model = values.model as string | undefined;
  const out = values.out as string | undefined;
  if (!model) throw new UsageError("models export-gguf needs --model DIR");
  if (!out) throw new UsageError("models export-gguf needs --out FILE");
  const dtype = values.dtype as string | undefined;
  if (dtype !== undefined && !["f32", "f16", "bf16"].includes(dtype)) throw new UsageError(`--dtype must be f32, f16 or bf16, got '${dtype}'`);
  if (!fs.existsSync(path.join(model, "config.json"))) throw new UsageError(`--model ${model} is not a checkpoint directory (no config.json)`);
  const file = path.resolve(out);
  let summary: ReturnType<typeof exportGguf>;
  try {
    summary = exportGguf(model, file, { dtype: dtype as GgufExportDType | undefined, name: values.name as string | undefined });
  } catch (error) {
    fs.rmSync(file, { force: true });
    if (error instanceof CheckpointError) throw new UsageError(error.message);
    throw error;
  }
  const padding = summary.paddingTokens > 0 ? `, ${summary.paddingTokens} padding tokens for embedding rows the tokenizer does not define` : "";
  console.log(`Wrote ${summary.architecture} in ${summary.dtype} (${summary.tensors} tensors${padding}) to ${file}`);
}
