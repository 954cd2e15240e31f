import path from "node:path";
import type { ModelInfo } from "../api.js";
import { CheckpointError } from "../checkpoint/errors.js";
import { generationDefaults, type GenerationConfig, readGenerationConfig } from "../checkpoint/generation-config.js";
import { type ModelConfig, readModelConfig } from "../checkpoint/model-config.js";
import { CheckpointTensors } from "../checkpoint/tensors.js";
import { readTokenizerConfig, type ChatTemplates, type TokenizerConfig } from "../checkpoint/tokenizer-config.js";
import { selectKernels } from "../kernels/select.js";
import type { Kernels } from "../kernels/types.js";
import { HfTokenizer } from "../tokenizer/hf-tokenizer.js";
import { Transformer } from "./transformer.js";
import { loadWeights } from "./weights.js";

/**
 * Everything of a Hugging Face checkpoint directory except the weights: cheap to read, so the
 * main thread keeps it (tokenizer, templates) while a worker thread holds the weights.
 */
export interface ModelFiles {
  dir: string;
  config: ModelConfig;
  tokenizer: HfTokenizer;
  tokenizerConfig: TokenizerConfig;
  chatTemplates: ChatTemplates;
  generationConfig: GenerationConfig;
  /** Sampling defaults in vLLM's names (temperature, top_p, top_k, min_p, repetition_penalty, max_tokens). */
  generationDefaults: Record<string, number>;
  /** The tokenizer's EOS id first, then generation_config.json's extra ones. */
  eosTokenIds: number[];
  /** The special-token variables a chat template sees (`bos_token`, `eos_token`, …). */
  templateSpecialTokens: Record<string, unknown>;
}

/** Everything a Hugging Face checkpoint directory holds, ready to run. */
export interface LoadedModel extends ModelFiles {
  transformer: Transformer;
}

export interface LoadModelOptions {
  /** Kernel backend; default `selectKernels()` (native if available, FLYWHEEL_KERNELS overrides). */
  kernels?: Kernels;
}

/**
 * Reads and cross-checks config.json, tokenizer.json + tokenizer_config.json (+ chat_template.jinja)
 * and generation_config.json, leaving the weights alone. Any problem is a CheckpointError naming
 * the file and field.
 */
export function loadModelFiles(dir: string): ModelFiles {
  const config = readModelConfig(dir);
  const tokenizerConfig = readTokenizerConfig(dir);
  const tokenizer = HfTokenizer.load(dir, tokenizerConfig);
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new CheckpointError(path.join(dir, "config.json"), "vocab_size", `is ${config.vocabSize}, but tokenizer.json defines ${tokenizer.vocabSize} tokens`);
  }
  const generationConfig = readGenerationConfig(dir);
  for (const id of generationConfig.eosTokenIds) {
    if (id >= config.vocabSize) throw new CheckpointError(path.join(dir, "generation_config.json"), "eos_token_id", `${id} is outside the vocabulary (${config.vocabSize})`);
  }
  const eosTokenIds = [...new Set([...(tokenizer.eosTokenId === undefined ? [] : [tokenizer.eosTokenId]), ...generationConfig.eosTokenIds])];
  return {
    dir,
    config,
    tokenizer,
    tokenizerConfig,
    chatTemplates: tokenizerConfig.chatTemplates,
    generationConfig,
    generationDefaults: generationDefaults(generationConfig),
    eosTokenIds,
    templateSpecialTokens: templateSpecialTokens(tokenizerConfig),
  };
}

/**
 * Loads a llama/qwen2/qwen3 checkpoint directory: `loadModelFiles` plus the safetensors weights
 * (single or sharded) on a kernel backend.
 */
export function loadModel(dir: string, options: LoadModelOptions = {}): LoadedModel {
  const files = loadModelFiles(dir);
  const kernels = options.kernels ?? selectKernels();
  const tensors = CheckpointTensors.open(dir);
  try {
    return { ...files, transformer: new Transformer(files.config, loadWeights(tensors, files.config, kernels), kernels) };
  } finally {
    tensors.close();
  }
}

/** transformers' `special_tokens_map`: the special tokens that are set, by variable name. */
function templateSpecialTokens(config: TokenizerConfig): Record<string, unknown> {
  const tokens: Record<string, unknown> = {};
  if (config.bosToken !== undefined) tokens.bos_token = config.bosToken;
  if (config.eosToken !== undefined) tokens.eos_token = config.eosToken;
  if (config.unkToken !== undefined) tokens.unk_token = config.unkToken;
  if (config.padToken !== undefined) tokens.pad_token = config.padToken;
  if (config.additionalSpecialTokens.length > 0) tokens.additional_special_tokens = config.additionalSpecialTokens;
  return tokens;
}

/** The `ModelInfo` the engine reports for a loaded model served as `id`. */
export function modelInfo(id: string, model: ModelFiles, options: { priorityScheduling?: boolean } = {}): ModelInfo {
  return {
    id,
    architecture: model.config.architecture,
    maxModelLen: model.config.maxPositionEmbeddings,
    vocabSize: model.config.vocabSize,
    chatTemplates: model.chatTemplates,
    generationDefaults: model.generationDefaults,
    eosTokenIds: model.eosTokenIds,
    templateSpecialTokens: model.templateSpecialTokens,
    priorityScheduling: options.priorityScheduling ?? false,
  };
}
