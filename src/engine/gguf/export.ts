import path from "node:path";
import { decodeFloats, encodeFloats, type FloatDType } from "../checkpoint/dtype.js";
import { CheckpointError } from "../checkpoint/errors.js";
import { type ModelConfig, readModelConfig } from "../checkpoint/model-config.js";
import { CheckpointTensors } from "../checkpoint/tensors.js";
import { ropeInverseFrequencies } from "../model/rope.js";
import { f32, FILE_TYPE, GgmlType, type GgufValue, str, u32 } from "./format.js";
import { tokenizerMetadata } from "./vocab.js";
import { type GgufTensorToWrite, writeGguf } from "./writer.js";

export type GgufExportDType = "f32" | "f16" | "bf16";

export interface GgufExportOptions {
  /** Precision of the 2-D weights; default: the checkpoint's own (1-D tensors are always f32, as llama.cpp expects). */
  dtype?: GgufExportDType;
  /** `general.name`; default: the directory's name. */
  name?: string;
}

export interface GgufExportSummary {
  architecture: string;
  dtype: GgufExportDType;
  tensors: number;
  /** Token rows beyond what the tokenizer defines, written as `[PAD<id>]` placeholders. */
  paddingTokens: number;
}

const GGML_TYPES: Record<GgufExportDType, { ggml: GgmlType; safetensors: FloatDType }> = {
  f32: { ggml: GgmlType.F32, safetensors: "F32" },
  f16: { ggml: GgmlType.F16, safetensors: "F16" },
  bf16: { ggml: GgmlType.BF16, safetensors: "BF16" },
};

/**
 * Converts a llama/qwen2/qwen3 Hugging Face checkpoint directory into one GGUF v3 file that
 * llama.cpp runs: hyperparameters under the architecture's keys, the tokenizer, and every weight
 * under llama.cpp's tensor names. Llama's q/k projections are permuted from Hugging Face's
 * rotate-half layout to the interleaved pairs llama.cpp's llama RoPE uses; Llama 3.1 RoPE scaling
 * becomes the `rope_freqs` tensor of per-frequency divisors.
 */
export function exportGguf(modelDir: string, outFile: string, options: GgufExportOptions = {}): GgufExportSummary {
  const config = readModelConfig(modelDir);
  const tensors = CheckpointTensors.open(modelDir);
  try {
    const dtype = options.dtype ?? storedDType(tensors);
    const target = GGML_TYPES[dtype];
    const metadata = new Map<string, GgufValue>();
    const arch = config.architecture;
    metadata.set("general.architecture", str(arch));
    metadata.set("general.name", str(options.name ?? path.basename(path.resolve(modelDir))));
    metadata.set("general.file_type", u32(FILE_TYPE[target.ggml]));
    metadata.set(`${arch}.vocab_size`, u32(config.vocabSize));
    metadata.set(`${arch}.context_length`, u32(config.maxPositionEmbeddings));
    metadata.set(`${arch}.embedding_length`, u32(config.hiddenSize));
    metadata.set(`${arch}.block_count`, u32(config.numLayers));
    metadata.set(`${arch}.feed_forward_length`, u32(config.intermediateSize));
    metadata.set(`${arch}.attention.head_count`, u32(config.numHeads));
    metadata.set(`${arch}.attention.head_count_kv`, u32(config.numKvHeads));
    metadata.set(`${arch}.attention.key_length`, u32(config.headDim));
    metadata.set(`${arch}.attention.value_length`, u32(config.headDim));
    metadata.set(`${arch}.attention.layer_norm_rms_epsilon`, f32(config.rmsNormEps));
    metadata.set(`${arch}.rope.dimension_count`, u32(config.headDim));
    metadata.set(`${arch}.rope.freq_base`, f32(config.ropeTheta));
    const vocab = tokenizerMetadata(modelDir, config.vocabSize);
    for (const [key, value] of vocab) metadata.set(key, value);

    const plan = tensorPlan(config, tensors);
    const toWrite: GgufTensorToWrite[] = plan.map((entry) => ({
      name: entry.gguf,
      shape: entry.shape,
      type: entry.shape.length === 1 ? GgmlType.F32 : target.ggml,
      data: () => {
        const values = entry.values();
        return encodeFloats(entry.shape.length === 1 ? "F32" : target.safetensors, values);
      },
    }));
    writeGguf(outFile, metadata, toWrite);
    const tokenTypes = vocab.get("tokenizer.ggml.tokens")!.value as string[];
    return { architecture: arch, dtype, tensors: toWrite.length, paddingTokens: tokenTypes.filter((token) => /^\[PAD\d+\]$/.test(token)).length };
  } finally {
    tensors.close();
  }
}

interface PlannedTensor {
  gguf: string;
  shape: number[];
  values: () => Float32Array;
}

/** Every tensor to write, in llama.cpp's names, with its (possibly permuted) values on demand. */
function tensorPlan(config: ModelConfig, tensors: CheckpointTensors): PlannedTensor[] {
  const prefix = tensors.has("model.embed_tokens.weight") || !tensors.has("embed_tokens.weight") ? "model." : "";
  const plan: PlannedTensor[] = [];
  const add = (hf: string, gguf: string, transform?: (values: Float32Array) => Float32Array) => {
    const entry = tensors.entry(hf);
    if (!entry) throw new CheckpointError(tensors.source, hf, "is missing");
    plan.push({
      gguf,
      shape: entry.shape,
      values: () => {
        const tensor = tensors.readFloat(hf);
        const values = decodeFloats(tensor.dtype, tensor.data);
        return transform ? transform(values) : values;
      },
    });
  };
  const permuteFor = (heads: number) => (config.architecture === "llama" ? (values: Float32Array) => interleaveRotaryHalves(values, heads, config.headDim) : undefined);

  add(`${prefix}embed_tokens.weight`, "token_embd.weight");
  for (let layer = 0; layer < config.numLayers; layer++) {
    const hf = `${prefix}layers.${layer}`;
    const blk = `blk.${layer}`;
    add(`${hf}.input_layernorm.weight`, `${blk}.attn_norm.weight`);
    for (const [proj, name, heads] of [
      ["q_proj", "attn_q", config.numHeads],
      ["k_proj", "attn_k", config.numKvHeads],
      ["v_proj", "attn_v", 0],
    ] as const) {
      const transform = heads > 0 ? permuteFor(heads) : undefined;
      add(`${hf}.self_attn.${proj}.weight`, `${blk}.${name}.weight`, transform);
      if (config.qkvBias) add(`${hf}.self_attn.${proj}.bias`, `${blk}.${name}.bias`, transform);
    }
    add(`${hf}.self_attn.o_proj.weight`, `${blk}.attn_output.weight`);
    if (config.outputBias) add(`${hf}.self_attn.o_proj.bias`, `${blk}.attn_output.bias`);
    if (config.qkNorm) {
      add(`${hf}.self_attn.q_norm.weight`, `${blk}.attn_q_norm.weight`);
      add(`${hf}.self_attn.k_norm.weight`, `${blk}.attn_k_norm.weight`);
    }
    add(`${hf}.post_attention_layernorm.weight`, `${blk}.ffn_norm.weight`);
    for (const [proj, name] of [
      ["gate_proj", "ffn_gate"],
      ["up_proj", "ffn_up"],
      ["down_proj", "ffn_down"],
    ] as const) {
      add(`${hf}.mlp.${proj}.weight`, `${blk}.${name}.weight`);
      if (config.mlpBias) add(`${hf}.mlp.${proj}.bias`, `${blk}.${name}.bias`);
    }
  }
  add(`${prefix}norm.weight`, "output_norm.weight");
  if (!config.tieWordEmbeddings) add("lm_head.weight", "output.weight");
  if (config.ropeScaling) {
    const scaled = ropeInverseFrequencies(config);
    const plain = ropeInverseFrequencies({ ...config, ropeScaling: null });
    plan.push({ gguf: "rope_freqs.weight", shape: [scaled.length], values: () => plain.map((frequency, i) => frequency / scaled[i]!) });
  }
  return plan;
}

/**
 * Reorders the rows of a q/k projection (weight or bias) head by head from Hugging Face's
 * rotate-half layout (row i pairs with row i + d/2) to interleaved pairs (rows 2i and 2i + 1),
 * the layout llama.cpp's llama RoPE rotates: new row 2i + t is old row t·d/2 + i.
 */
export function interleaveRotaryHalves(values: Float32Array, heads: number, headDim: number): Float32Array {
  const rowLength = values.length / (heads * headDim);
  if (!Number.isInteger(rowLength)) throw new RangeError(`a ${values.length}-value tensor does not split into ${heads} heads of ${headDim} rows`);
  const half = headDim / 2;
  const out = new Float32Array(values.length);
  for (let head = 0; head < heads; head++) {
    for (let i = 0; i < half; i++) {
      for (let t = 0; t < 2; t++) {
        const from = (head * headDim + t * half + i) * rowLength;
        out.set(values.subarray(from, from + rowLength), (head * headDim + 2 * i + t) * rowLength);
      }
    }
  }
  return out;
}

/** The precision the checkpoint stores its embedding in. */
function storedDType(tensors: CheckpointTensors): GgufExportDType {
  const embedding = tensors.entry("model.embed_tokens.weight") ?? tensors.entry("embed_tokens.weight");
  if (embedding?.dtype === "F16") return "f16";
  if (embedding?.dtype === "BF16") return "bf16";
  return "f32";
}
