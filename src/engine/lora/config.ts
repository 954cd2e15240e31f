import { CheckpointError } from "../checkpoint/errors.js";
import { describe, JsonFields, type JsonObject } from "../checkpoint/json-file.js";
import type { ModelConfig } from "../checkpoint/model-config.js";
import { LINEAR_NAMES, type LinearName } from "../model/types.js";

/** The linear layers of a decoder layer in forward order, with their module paths inside the layer. */

export const MODULE_PATHS: Record<LinearName, string> = {
  q_proj: "self_attn.q_proj",
  k_proj: "self_attn.k_proj",
  v_proj: "self_attn.v_proj",
  o_proj: "self_attn.o_proj",
  gate_proj: "mlp.gate_proj",
  up_proj: "mlp.up_proj",
  down_proj: "mlp.down_proj",
};

/**
 * What Flywheel uses of a PEFT `LoraConfig`. The scale of every delta is lora_alpha / r, or
 * lora_alpha / √r with rsLoRA (PEFT's and vLLM's rule). Dropout only acts in training, where
 * Flywheel uses none; it is kept so a written config says what the adapter was trained with.
 */
export interface LoraConfig {
  rank: number;
  alpha: number;
  useRslora: boolean;
  /** `target_modules` as written: module names (matched as PEFT does, by suffix) or one regular expression. */
  targetModules: string[] | string;
  /** Only these layers carry adapters (PEFT `layers_to_transform`); null: all. */
  layersToTransform: number[] | null;
  dropout: number;
  baseModelNameOrPath: string | null;
}

/** Flywheel's training default: rank 8, alpha 16 on all seven linear layers of every decoder layer. */
export const DEFAULT_LORA_CONFIG: LoraConfig = {
  rank: 8,
  alpha: 16,
  useRslora: false,
  targetModules: [...LINEAR_NAMES],
  layersToTransform: null,
  dropout: 0,
  baseModelNameOrPath: null,
};

export function loraScale(config: Pick<LoraConfig, "rank" | "alpha" | "useRslora">): number {
  return config.useRslora ? config.alpha / Math.sqrt(config.rank) : config.alpha / config.rank;
}

/** The full module name PEFT matches `target_modules` against, e.g. `model.layers.3.self_attn.q_proj`. */
export function moduleName(layer: number, name: LinearName): string {
  return `model.layers.${layer}.${MODULE_PATHS[name]}`;
}

/**
 * Whether PEFT would put an adapter on this linear layer: a list matches a module whose full name
 * equals an entry or ends with "." + entry; a string is a regular expression that must match the
 * whole name; "all-linear" means every linear layer but the output head.
 */
export function isTargeted(config: Pick<LoraConfig, "targetModules" | "layersToTransform">, layer: number, name: LinearName): boolean {
  if (config.layersToTransform && !config.layersToTransform.includes(layer)) return false;
  const full = moduleName(layer, name);
  const targets = config.targetModules;
  if (typeof targets === "string") {
    if (targets === "all-linear") return true;
    return new RegExp(`^(?:${targets})$`).test(full);
  }
  return targets.some((target) => full === target || full.endsWith(`.${target}`));
}

/** [out, in] of one linear layer of the model. */
export function linearShape(config: ModelConfig, name: LinearName): { outDim: number; inDim: number } {
  const { hiddenSize: hidden, intermediateSize: intermediate } = config;
  const queries = config.numHeads * config.headDim;
  const keyValues = config.numKvHeads * config.headDim;
  switch (name) {
    case "q_proj":
      return { outDim: queries, inDim: hidden };
    case "k_proj":
    case "v_proj":
      return { outDim: keyValues, inDim: hidden };
    case "o_proj":
      return { outDim: hidden, inDim: queries };
    case "gate_proj":
    case "up_proj":
      return { outDim: intermediate, inDim: hidden };
    case "down_proj":
      return { outDim: hidden, inDim: intermediate };
  }
}

/**
 * Reads an `adapter_config.json` object. Options Flywheel cannot apply exactly are refused with
 * the field at fault rather than ignored: another PEFT method, DoRA, trained biases, extra saved
 * modules, per-module ranks or alphas, Conv1D layouts, layer replication.
 */
export function parseAdapterConfig(json: JsonObject, file = "adapter_config.json"): LoraConfig {
  const fields = new JsonFields(file, json);
  const peftType = fields.optionalString("peft_type");
  if (peftType !== undefined && peftType !== "LORA") fields.fail("peft_type", `is ${describe(peftType)}; only LORA adapters are supported`);
  const taskType = fields.optionalString("task_type");
  if (taskType !== undefined && taskType !== "CAUSAL_LM") fields.fail("task_type", `is ${describe(taskType)}; only CAUSAL_LM adapters are supported`);
  refuseIf(fields, "use_dora", fields.optionalBoolean("use_dora") === true, "is true; DoRA adapters are not supported");
  refuseIf(fields, "lora_bias", fields.optionalBoolean("lora_bias") === true, "is true; LoRA biases are not supported");
  refuseIf(fields, "fan_in_fan_out", fields.optionalBoolean("fan_in_fan_out") === true, "is true; only nn.Linear layouts (fan_in_fan_out false) are supported");
  const bias = fields.optionalString("bias") ?? "none";
  refuseIf(fields, "bias", bias !== "none", `is ${describe(bias)}; only "none" is supported (trained biases are not part of the LoRA delta)`);
  refuseIf(fields, "modules_to_save", nonEmpty(fields.raw("modules_to_save")), "is set; adapters that save whole modules are not supported");
  refuseIf(fields, "rank_pattern", nonEmpty(fields.raw("rank_pattern")), "is set; per-module ranks are not supported");
  refuseIf(fields, "alpha_pattern", nonEmpty(fields.raw("alpha_pattern")), "is set; per-module alphas are not supported");
  refuseIf(fields, "layer_replication", nonEmpty(fields.raw("layer_replication")), "is set; layer replication is not supported");

  return {
    rank: fields.requiredInt("r", 1),
    alpha: fields.requiredNumber("lora_alpha", (value) => (value > 0 ? undefined : "must be positive")),
    useRslora: fields.optionalBoolean("use_rslora") ?? false,
    targetModules: targetModules(fields),
    layersToTransform: layersToTransform(fields),
    dropout: fields.optionalNumber("lora_dropout", (value) => (value >= 0 && value < 1 ? undefined : "must be in [0, 1)")) ?? 0,
    baseModelNameOrPath: fields.optionalString("base_model_name_or_path") ?? null,
  };
}

function targetModules(fields: JsonFields): string[] | string {
  const value = fields.raw("target_modules");
  if (value === undefined) fields.fail("target_modules", "is missing");
  if (typeof value === "string") {
    if (value === "all-linear") return value;
    try {
      new RegExp(value);
    } catch {
      fields.fail("target_modules", `is not a valid regular expression: ${describe(value)}`);
    }
    return value;
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === "string" && item.length > 0)) {
    fields.fail("target_modules", `must be a non-empty list of module names or a regular expression, got ${describe(value)}`);
  }
  return value as string[];
}

function layersToTransform(fields: JsonFields): number[] | null {
  const value = fields.raw("layers_to_transform");
  if (value === undefined) return null;
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => Number.isInteger(item) && (item as number) >= 0)) fields.fail("layers_to_transform", `must be a layer index or a list of them, got ${describe(value)}`);
  return list as number[];
}

function refuseIf(fields: JsonFields, key: string, condition: boolean, detail: string): void {
  if (condition) fields.fail(key, detail);
}

function nonEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** The `adapter_config.json` PEFT writes for this config (keys sorted, as PEFT's `save_pretrained` does). */
export function adapterConfigJson(config: LoraConfig): JsonObject {
  const json: JsonObject = {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: config.baseModelNameOrPath,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: config.layersToTransform,
    loftq_config: {},
    lora_alpha: config.alpha,
    lora_bias: false,
    lora_dropout: config.dropout,
    megatron_config: null,
    megatron_core: "megatron.core",
    modules_to_save: null,
    peft_type: "LORA",
    r: config.rank,
    rank_pattern: {},
    revision: null,
    target_modules: config.targetModules,
    task_type: "CAUSAL_LM",
    use_dora: false,
    use_rslora: config.useRslora,
  };
  return json;
}

/** Checks the options of a config Flywheel builds itself (the file parser checks read ones). */
export function validateLoraConfig(config: LoraConfig): void {
  const fail = (field: string, detail: string): never => {
    throw new CheckpointError("LoRA config", field, detail);
  };
  if (!Number.isInteger(config.rank) || config.rank < 1) fail("r", `must be a positive integer, got ${config.rank}`);
  if (!(config.alpha > 0) || !Number.isFinite(config.alpha)) fail("lora_alpha", `must be positive, got ${config.alpha}`);
  if (!(config.dropout >= 0 && config.dropout < 1)) fail("lora_dropout", `must be in [0, 1), got ${config.dropout}`);
  if (Array.isArray(config.targetModules) && config.targetModules.length === 0) fail("target_modules", "must name at least one module");
}
