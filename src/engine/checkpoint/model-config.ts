import path from "node:path";
import { JsonFields, readJsonObject, type JsonObject } from "./json-file.js";

export const SUPPORTED_ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;
export type Architecture = (typeof SUPPORTED_ARCHITECTURES)[number];

/** Llama 3.1-style frequency-dependent RoPE scaling (`rope_type: "llama3"`). */
export interface Llama3RopeScaling {
  type: "llama3";
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

/** config.json of a llama, qwen2 or qwen3 checkpoint, normalized: every default resolved. */
export interface ModelConfig {
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: Llama3RopeScaling | null;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Bias on q_proj, k_proj and v_proj (always on for qwen2). */
  qkvBias: boolean;
  /** Bias on o_proj (llama and qwen3 `attention_bias`; never for qwen2). */
  outputBias: boolean;
  /** Bias on gate/up/down projections (llama `mlp_bias`). */
  mlpBias: boolean;
  /** Per-head RMSNorm of queries and keys before RoPE (qwen3). */
  qkNorm: boolean;
  /** The dtype the checkpoint was saved in (`torch_dtype` or `dtype`), if stated. */
  torchDtype: "float32" | "float16" | "bfloat16" | undefined;
  bosTokenId: number | undefined;
  eosTokenIds: number[];
}

/** Reads and normalizes `<dir>/config.json`. */
export function readModelConfig(dir: string): ModelConfig {
  const file = path.join(dir, "config.json");
  return parseModelConfig(readJsonObject(file), file);
}

/**
 * Normalizes a config.json object. Size fields are required (a checkpoint without them cannot be
 * loaded correctly); the others take the defaults of the Hugging Face config classes.
 */
export function parseModelConfig(json: JsonObject, file = "config.json"): ModelConfig {
  const fields: JsonFields = new JsonFields(file, json);
  const modelType = fields.optionalString("model_type");
  if (modelType === undefined) fields.fail("model_type", `is missing (supported: ${SUPPORTED_ARCHITECTURES.join(", ")})`);
  if (!(SUPPORTED_ARCHITECTURES as readonly string[]).includes(modelType)) {
    fields.fail("model_type", `${JSON.stringify(modelType)} is not supported (supported: ${SUPPORTED_ARCHITECTURES.join(", ")})`);
  }
  const architecture = modelType as Architecture;

  const hiddenSize = fields.requiredInt("hidden_size");
  const numHeads = fields.requiredInt("num_attention_heads");
  const numKvHeads = fields.optionalInt("num_key_value_heads", 1) ?? numHeads;
  if (numHeads % numKvHeads !== 0) fields.fail("num_key_value_heads", `must divide num_attention_heads (${numHeads}), got ${numKvHeads}`);
  const headDim = fields.optionalInt("head_dim", 2) ?? defaultHeadDim(fields, hiddenSize, numHeads);
  if (headDim % 2 !== 0) fields.fail("head_dim", `must be even for rotary embeddings, got ${headDim}`);

  const hiddenAct = fields.optionalString("hidden_act") ?? "silu";
  if (hiddenAct !== "silu") fields.fail("hidden_act", `${JSON.stringify(hiddenAct)} is not supported (only "silu")`);
  if (fields.optionalBoolean("use_sliding_window")) fields.fail("use_sliding_window", "true is not supported (sliding-window attention)");

  const attentionBias = fields.optionalBoolean("attention_bias") ?? false;
  const rope = parseRope(fields);
  return {
    architecture,
    vocabSize: fields.requiredInt("vocab_size"),
    hiddenSize,
    intermediateSize: fields.requiredInt("intermediate_size"),
    numLayers: fields.requiredInt("num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: fields.optionalNumber("rms_norm_eps", (value) => (value > 0 ? undefined : "must be > 0")) ?? 1e-6,
    ropeTheta: rope.theta,
    ropeScaling: rope.scaling,
    maxPositionEmbeddings: fields.optionalInt("max_position_embeddings", 1) ?? (architecture === "llama" ? 2048 : 32768),
    tieWordEmbeddings: fields.optionalBoolean("tie_word_embeddings") ?? false,
    qkvBias: architecture === "qwen2" ? true : attentionBias,
    outputBias: architecture === "qwen2" ? false : attentionBias,
    mlpBias: architecture === "llama" ? (fields.optionalBoolean("mlp_bias") ?? false) : false,
    qkNorm: architecture === "qwen3",
    torchDtype: parseDtype(fields),
    bosTokenId: fields.intList("bos_token_id")[0],
    eosTokenIds: fields.intList("eos_token_id"),
  };
}

function defaultHeadDim(fields: JsonFields, hiddenSize: number, numHeads: number): number {
  if (hiddenSize % numHeads !== 0) fields.fail("head_dim", `is missing and hidden_size (${hiddenSize}) is not a multiple of num_attention_heads (${numHeads})`);
  return hiddenSize / numHeads;
}

const positive = (value: number) => (value > 0 ? undefined : "must be > 0");

/**
 * RoPE parameters live in `rope_theta` + `rope_scaling` (transformers 4.x) or in one
 * `rope_parameters` object (transformers 5). Only the default and llama3 types are supported.
 */
function parseRope(fields: JsonFields): { theta: number; scaling: Llama3RopeScaling | null } {
  const parameters = fields.optionalObject("rope_parameters");
  const scaling = parameters ?? fields.optionalObject("rope_scaling");
  const theta = parameters?.optionalNumber("rope_theta", positive) ?? fields.optionalNumber("rope_theta", positive) ?? 10000;
  if (!scaling) return { theta, scaling: null };
  const typeKey = scaling.has("rope_type") ? "rope_type" : "type";
  const type = scaling.optionalString(typeKey) ?? "default";
  if (type === "default") return { theta, scaling: null };
  if (type !== "llama3") scaling.fail(typeKey, `${JSON.stringify(type)} is not supported (supported: "default", "llama3")`);
  const lowFreqFactor = scaling.requiredNumber("low_freq_factor", positive);
  const highFreqFactor = scaling.requiredNumber("high_freq_factor", positive);
  if (highFreqFactor <= lowFreqFactor) scaling.fail("high_freq_factor", `must be greater than low_freq_factor (${lowFreqFactor}), got ${highFreqFactor}`);
  return {
    theta,
    scaling: {
      type: "llama3",
      factor: scaling.requiredNumber("factor", positive),
      lowFreqFactor,
      highFreqFactor,
      originalMaxPositionEmbeddings: scaling.requiredNumber("original_max_position_embeddings", positive),
    },
  };
}

function parseDtype(fields: JsonFields): ModelConfig["torchDtype"] {
  const key = fields.has("torch_dtype") ? "torch_dtype" : "dtype";
  const value = fields.optionalString(key);
  if (value === undefined) return undefined;
  if (value === "float32" || value === "float16" || value === "bfloat16") return value;
  return fields.fail(key, `${JSON.stringify(value)} is not supported (supported: float32, float16, bfloat16)`);
}
