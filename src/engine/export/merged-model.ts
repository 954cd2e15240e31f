import fs from "node:fs";
import path from "node:path";
import { decodeFloats, encodeFloats } from "../checkpoint/dtype.js";
import { INDEX_FILE, SINGLE_FILE, CheckpointTensors } from "../checkpoint/tensors.js";
import { type LazyTensorToWrite, tensorBytes, writeSafetensorsLazily } from "../checkpoint/safetensors.js";
import type { LoraAdapter } from "../lora/adapter.js";
import { MODULE_PATHS } from "../lora/config.js";
import { LINEAR_NAMES, type LinearName } from "../model/types.js";

/**
 * Writes a Hugging Face model directory whose weights are the base model's with a LoRA adapter
 * merged in (W + scale · B·A), loadable by `transformers` without PEFT. Every weight is written in
 * f32: the engine applies an adapter in f32 on the base weights, so f32 merged weights answer
 * like the engine does, where rounding them back to a 16-bit base dtype would not. The base
 * model's other files (config, tokenizer, generation config) are copied; its model card is not,
 * since it describes other weights.
 */

export interface MergedModelSummary {
  tensors: number;
  /** How many linear layers had an adapter merged into them. */
  mergedLinears: number;
  shards: number;
}

/** Shards stay well below tar's 8 GiB per-file limit and small enough to upload anywhere. */
export const DEFAULT_MAX_SHARD_BYTES = 4 * 1024 ** 3;

const WEIGHT_FILE = /\.(safetensors|bin|pt|pth|gguf)$/;
const NOT_COPIED = new Set([INDEX_FILE, "pytorch_model.bin.index.json", "README.md"]);
const LINEAR_WEIGHT = new RegExp(`^(?:model\\.)?layers\\.(\\d+)\\.(${LINEAR_NAMES.map((name) => MODULE_PATHS[name].replace(".", "\\.")).join("|")})\\.weight$`);
const PATH_TO_NAME = new Map(LINEAR_NAMES.map((name) => [MODULE_PATHS[name], name]));

export function writeMergedModel(baseDir: string, adapter: LoraAdapter | null, outDir: string, options: { maxShardBytes?: number } = {}): MergedModelSummary {
  fs.mkdirSync(outDir, { recursive: true });
  copyModelFiles(baseDir, outDir);
  const tensors = CheckpointTensors.open(baseDir);
  try {
    let mergedLinears = 0;
    const toWrite: LazyTensorToWrite[] = tensors.names().map((name) => {
      const entry = tensors.entry(name)!;
      const module = adapter ? adapterModuleOf(adapter, name) : undefined;
      if (module) mergedLinears++;
      return {
        name,
        dtype: "F32",
        shape: entry.shape,
        data: () => {
          const stored = tensors.readFloat(name);
          const values = decodeFloats(stored.dtype, stored.data);
          if (module) addScaledProduct(values, module.b, module.a, module.outDim, module.inDim, adapter!.rank, adapter!.scale);
          return encodeFloats("F32", values);
        },
      };
    });
    const shards = writeShards(outDir, toWrite, options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES);
    return { tensors: toWrite.length, mergedLinears, shards };
  } finally {
    tensors.close();
  }
}

/** The adapter's factors for a base tensor name such as `model.layers.3.self_attn.q_proj.weight`, if it adapts it. */
function adapterModuleOf(adapter: LoraAdapter, tensorName: string) {
  const match = LINEAR_WEIGHT.exec(tensorName);
  if (!match) return undefined;
  return adapter.module(Number(match[1]), PATH_TO_NAME.get(match[2]!) as LinearName);
}

/** W [out × in] += scale · B [out × r] · A [r × in], in f32. */
export function addScaledProduct(weight: Float32Array, b: Float32Array, a: Float32Array, outDim: number, inDim: number, rank: number, scale: number): void {
  const row = new Float32Array(inDim);
  for (let o = 0; o < outDim; o++) {
    row.fill(0);
    for (let r = 0; r < rank; r++) {
      const factor = b[o * rank + r]!;
      if (factor === 0) continue;
      const aRow = r * inDim;
      for (let i = 0; i < inDim; i++) row[i]! += factor * a[aRow + i]!;
    }
    const wRow = o * inDim;
    for (let i = 0; i < inDim; i++) weight[wRow + i]! += scale * row[i]!;
  }
}

/** Copies the base directory's non-weight files, with config.json saying the weights are now f32. */
function copyModelFiles(baseDir: string, outDir: string): void {
  for (const entry of fs.readdirSync(baseDir, { withFileTypes: true })) {
    if (!entry.isFile() || WEIGHT_FILE.test(entry.name) || NOT_COPIED.has(entry.name)) continue;
    const from = path.join(baseDir, entry.name);
    const to = path.join(outDir, entry.name);
    if (entry.name === "config.json") {
      const config = JSON.parse(fs.readFileSync(from, "utf8")) as Record<string, unknown>;
      config.torch_dtype = "float32";
      if ("dtype" in config) config.dtype = "float32";
      fs.writeFileSync(to, `${JSON.stringify(config, null, 2)}\n`);
    } else {
      fs.copyFileSync(from, to);
    }
  }
}

/** `model.safetensors`, or Hugging Face-named shards with an index when the weights exceed one shard. */
function writeShards(outDir: string, tensors: LazyTensorToWrite[], maxShardBytes: number): number {
  const groups: LazyTensorToWrite[][] = [[]];
  let size = 0;
  for (const tensor of tensors) {
    const bytes = tensorBytes(tensor);
    if (size > 0 && size + bytes > maxShardBytes) {
      groups.push([]);
      size = 0;
    }
    groups.at(-1)!.push(tensor);
    size += bytes;
  }
  if (groups.length === 1) {
    writeSafetensorsLazily(path.join(outDir, SINGLE_FILE), tensors);
    return 1;
  }
  const weightMap: Record<string, string> = {};
  groups.forEach((group, i) => {
    const fileName = `model-${String(i + 1).padStart(5, "0")}-of-${String(groups.length).padStart(5, "0")}.safetensors`;
    writeSafetensorsLazily(path.join(outDir, fileName), group);
    for (const tensor of group) weightMap[tensor.name] = fileName;
  });
  const totalSize = tensors.reduce((sum, tensor) => sum + tensorBytes(tensor), 0);
  fs.writeFileSync(path.join(outDir, INDEX_FILE), `${JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2)}\n`);
  return groups.length;
}
