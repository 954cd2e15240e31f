import { decodeFloats } from "../checkpoint/dtype.js";
import { CheckpointError } from "../checkpoint/errors.js";
import type { ModelConfig } from "../checkpoint/model-config.js";
import type { CheckpointTensors } from "../checkpoint/tensors.js";
import type { Kernels, WeightMatrix } from "../kernels/types.js";

/** A linear layer y = x Wᵀ + b, W stored [out × in]. */
export interface Linear {
  weight: WeightMatrix;
  bias: Float32Array | undefined;
}

/** One decoder layer, named after the Hugging Face modules it comes from. */
export interface LayerWeights {
  inputNorm: Float32Array;
  q: Linear;
  k: Linear;
  v: Linear;
  o: Linear;
  /** qwen3's per-head RMSNorm of queries and keys (weight of size head_dim). */
  qNorm: Float32Array | undefined;
  kNorm: Float32Array | undefined;
  postAttentionNorm: Float32Array;
  gate: Linear;
  up: Linear;
  down: Linear;
}

export interface ModelWeights {
  embedTokens: WeightMatrix;
  layers: LayerWeights[];
  finalNorm: Float32Array;
  /** The output projection; the embedding itself when tie_word_embeddings is set. */
  lmHead: WeightMatrix;
}

/**
 * Reads the weights config.json describes from a checkpoint into a kernel backend, checking that
 * every tensor exists with the shape the config implies. Tensors nobody uses are ignored.
 */
export function loadWeights(tensors: CheckpointTensors, config: ModelConfig, kernels: Kernels): ModelWeights {
  // Checkpoints of the bare model (no causal-LM head) name tensors without the "model." prefix.
  const prefix = tensors.has("model.embed_tokens.weight") || !tensors.has("embed_tokens.weight") ? "model." : "";
  const { hiddenSize: hidden, numHeads, numKvHeads, headDim, intermediateSize, vocabSize } = config;

  const read = (name: string, shape: number[]) => {
    const tensor = tensors.readFloat(name);
    if (tensor.shape.length !== shape.length || tensor.shape.some((size, i) => size !== shape[i])) {
      throw new CheckpointError(tensors.entry(name)!.file, name, `has shape [${tensor.shape.join(", ")}], but config.json implies [${shape.join(", ")}]`);
    }
    return tensor;
  };
  const matrix = (name: string, rows: number, cols: number) => {
    const tensor = read(name, [rows, cols]);
    return kernels.createMatrix(rows, cols, tensor.dtype, tensor.data);
  };
  const vector = (name: string, size: number) => {
    const tensor = read(name, [size]);
    return decodeFloats(tensor.dtype, tensor.data);
  };
  const linear = (name: string, rows: number, cols: number, withBias: boolean): Linear => ({
    weight: matrix(`${name}.weight`, rows, cols),
    bias: withBias ? vector(`${name}.bias`, rows) : undefined,
  });

  const embedTokens = matrix(`${prefix}embed_tokens.weight`, vocabSize, hidden);
  const layers: LayerWeights[] = [];
  for (let layer = 0; layer < config.numLayers; layer++) {
    const base = `${prefix}layers.${layer}`;
    layers.push({
      inputNorm: vector(`${base}.input_layernorm.weight`, hidden),
      q: linear(`${base}.self_attn.q_proj`, numHeads * headDim, hidden, config.qkvBias),
      k: linear(`${base}.self_attn.k_proj`, numKvHeads * headDim, hidden, config.qkvBias),
      v: linear(`${base}.self_attn.v_proj`, numKvHeads * headDim, hidden, config.qkvBias),
      o: linear(`${base}.self_attn.o_proj`, hidden, numHeads * headDim, config.outputBias),
      qNorm: config.qkNorm ? vector(`${base}.self_attn.q_norm.weight`, headDim) : undefined,
      kNorm: config.qkNorm ? vector(`${base}.self_attn.k_norm.weight`, headDim) : undefined,
      postAttentionNorm: vector(`${base}.post_attention_layernorm.weight`, hidden),
      gate: linear(`${base}.mlp.gate_proj`, intermediateSize, hidden, config.mlpBias),
      up: linear(`${base}.mlp.up_proj`, intermediateSize, hidden, config.mlpBias),
      down: linear(`${base}.mlp.down_proj`, hidden, intermediateSize, config.mlpBias),
    });
  }
  return {
    embedTokens,
    layers,
    finalNorm: vector(`${prefix}norm.weight`, hidden),
    lmHead: config.tieWordEmbeddings ? embedTokens : matrix("lm_head.weight", vocabSize, hidden),
  };
}
