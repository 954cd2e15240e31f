import fs from "node:fs";
import path from "node:path";
import { decodeFloats, encodeFloats } from "../checkpoint/dtype.js";
import { CheckpointError } from "../checkpoint/errors.js";
import { readJsonObject } from "../checkpoint/json-file.js";
import type { ModelConfig } from "../checkpoint/model-config.js";
import { encodeSafetensors, SafetensorsReader, type TensorToWrite } from "../checkpoint/safetensors.js";
import { LINEAR_NAMES, type LinearName } from "../model/types.js";
import { LoraAdapter, type LoraModule } from "./adapter.js";
import { adapterConfigJson, isTargeted, linearShape, MODULE_PATHS, parseAdapterConfig } from "./config.js";

export const ADAPTER_CONFIG_FILE = "adapter_config.json";
export const ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors";

/** PEFT's saved name of a LoRA factor, e.g. `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`. */
export function peftTensorName(layer: number, name: LinearName, factor: "A" | "B"): string {
  return `base_model.model.model.layers.${layer}.${MODULE_PATHS[name]}.lora_${factor}.weight`;
}

const TENSOR_NAME = /^base_model\.model\.model\.layers\.(\d+)\.((?:self_attn|mlp)\.[a-z_]+)\.lora_([AB])\.weight$/;
const PATH_TO_NAME = new Map(LINEAR_NAMES.map((name) => [MODULE_PATHS[name], name]));

/** The layer, linear layer and factor a saved tensor name stands for; undefined for any other name. */
export function parsePeftTensorName(tensorName: string): { layer: number; name: LinearName; factor: "A" | "B" } | undefined {
  const match = TENSOR_NAME.exec(tensorName);
  const name = match && PATH_TO_NAME.get(match[2]!);
  if (!match || !name) return undefined;
  return { layer: Number(match[1]), name, factor: match[3] as "A" | "B" };
}

/** Where an adapter's two files are, when they are not side by side in one directory (e.g. blobs). */
export interface AdapterFilePaths {
  configFile: string;
  weightsFile: string;
}

/**
 * Reads a PEFT LoRA adapter (`adapter_config.json` + `adapter_model.safetensors`, in a directory or
 * at the given paths) for a model, checking every tensor against the base model's shapes. Problems
 * are `CheckpointError`s naming the file and the field or tensor at fault.
 */
export function loadLoraAdapter(source: string | AdapterFilePaths, model: { config: ModelConfig }): LoraAdapter {
  const { configFile, weightsFile } = typeof source === "string" ? { configFile: path.join(source, ADAPTER_CONFIG_FILE), weightsFile: path.join(source, ADAPTER_WEIGHTS_FILE) } : source;
  const config = parseAdapterConfig(readJsonObject(configFile), configFile);
  if (typeof source === "string" && !fs.existsSync(weightsFile) && fs.existsSync(path.join(source, "adapter_model.bin"))) {
    throw new CheckpointError(weightsFile, undefined, "is missing (adapter_model.bin pickles are not supported: save the adapter with safetensors)");
  }
  const reader = SafetensorsReader.open(weightsFile);
  try {
    return new LoraAdapter(config, model.config, readModules(reader, config, model.config));
  } finally {
    reader.close();
  }
}

function readModules(reader: SafetensorsReader, config: ReturnType<typeof parseAdapterConfig>, modelConfig: ModelConfig): LoraModule[] {
  const fail = (field: string | undefined, detail: string): never => {
    throw new CheckpointError(reader.file, field, detail);
  };
  const factors = new Map<string, { A?: Float32Array; B?: Float32Array; layer: number; name: LinearName }>();
  for (const tensorName of reader.names()) {
    const parsed = parsePeftTensorName(tensorName);
    if (!parsed) {
      const hint = tensorName.includes("lora_magnitude_vector") ? " (a DoRA magnitude)" : tensorName.includes("lora_embedding") ? " (an embedding adapter)" : "";
      fail(tensorName, `is not a LoRA factor of a linear layer of a decoder layer${hint}; only q/k/v/o/gate/up/down_proj adapters are supported`);
    }
    const { layer, name, factor } = parsed!;
    if (layer >= modelConfig.numLayers) fail(tensorName, `is for layer ${layer}, but the base model has ${modelConfig.numLayers} layers`);
    if (!isTargeted(config, layer, name)) fail(tensorName, `is not covered by target_modules / layers_to_transform of ${ADAPTER_CONFIG_FILE}`);
    const { inDim, outDim } = linearShape(modelConfig, name);
    const expected = factor === "A" ? [config.rank, inDim] : [outDim, config.rank];
    const tensor = reader.readFloat(tensorName);
    if (tensor.shape.length !== 2 || tensor.shape[0] !== expected[0] || tensor.shape[1] !== expected[1]) {
      fail(tensorName, `has shape [${tensor.shape.join(", ")}], but r=${config.rank} and the base model's ${name} (${outDim} × ${inDim}) imply [${expected.join(", ")}]`);
    }
    const key = `${layer}.${name}`;
    const entry = factors.get(key) ?? { layer, name };
    entry[factor] = decodeFloats(tensor.dtype, tensor.data);
    factors.set(key, entry);
  }
  const modules: LoraModule[] = [];
  for (const { layer, name, A, B } of factors.values()) {
    if (!A || !B) fail(peftTensorName(layer, name, A ? "B" : "A"), `is missing (its lora_${A ? "A" : "B"} is present)`);
    const { inDim, outDim } = linearShape(modelConfig, name);
    modules.push({ layer, name, inDim, outDim, a: A!, b: B! });
  }
  if (modules.length === 0) fail(undefined, "holds no LoRA factors");
  return modules;
}

/** The adapter's PEFT files in memory: file name → bytes (f32 factors). */
export function adapterFiles(adapter: LoraAdapter): Record<string, Uint8Array> {
  const tensors: TensorToWrite[] = adapter.modules().flatMap((module) => [
    { name: peftTensorName(module.layer, module.name, "A"), dtype: "F32" as const, shape: [adapter.rank, module.inDim], data: encodeFloats("F32", module.a) },
    { name: peftTensorName(module.layer, module.name, "B"), dtype: "F32" as const, shape: [module.outDim, adapter.rank], data: encodeFloats("F32", module.b) },
  ]);
  return {
    [ADAPTER_CONFIG_FILE]: Buffer.from(`${JSON.stringify(adapterConfigJson(adapter.config), null, 2)}\n`, "utf8"),
    [ADAPTER_WEIGHTS_FILE]: encodeSafetensors(tensors, { format: "pt" }),
  };
}

/** Writes the adapter in PEFT layout, readable by PEFT, vLLM and `loadLoraAdapter`. */
export function saveLoraAdapter(dir: string, adapter: LoraAdapter): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(adapterFiles(adapter))) fs.writeFileSync(path.join(dir, name), bytes);
}
