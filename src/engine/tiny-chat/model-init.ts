import fs from "node:fs";
import path from "node:path";
import { encodeFloats } from "../checkpoint/dtype.js";
import type { TensorToWrite } from "../checkpoint/safetensors.js";
import { writeCheckpointTensors } from "../checkpoint/tensors.js";
import { SeededRandom } from "../fixtures/random.js";
import type { FixtureTokenizerFiles } from "../fixtures/tokenizer-files.js";

/** The size of a tiny-chat model (qwen2 architecture, tied embeddings). */
export interface TinyChatShape {
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  intermediateSize: number;
  maxPositionEmbeddings: number;
}

/** config.json of a Qwen2ForCausalLM with tied embeddings, the vocabulary padded to a multiple of 64. */
export function tinyChatConfig(shape: TinyChatShape, tokenizer: FixtureTokenizerFiles): Record<string, unknown> {
  return {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    vocab_size: Math.ceil(tokenizer.size / 64) * 64,
    hidden_size: shape.hiddenSize,
    intermediate_size: shape.intermediateSize,
    num_hidden_layers: shape.numLayers,
    num_attention_heads: shape.numHeads,
    num_key_value_heads: shape.numKvHeads,
    hidden_act: "silu",
    max_position_embeddings: shape.maxPositionEmbeddings,
    initializer_range: 0.02,
    rms_norm_eps: 1e-6,
    use_cache: true,
    tie_word_embeddings: true,
    rope_theta: 10000.0,
    rope_scaling: null,
    use_sliding_window: false,
    sliding_window: null,
    max_window_layers: shape.numLayers,
    attention_dropout: 0.0,
    bos_token_id: tokenizer.ids["<|endoftext|>"],
    eos_token_id: tokenizer.ids["<|im_end|>"],
    torch_dtype: "float32",
  };
}

/** Greedy by default (a small model answers best that way); a request's temperature turns sampling on. */
export function tinyChatGenerationConfig(tokenizer: FixtureTokenizerFiles): Record<string, unknown> {
  return {
    bos_token_id: tokenizer.ids["<|endoftext|>"],
    pad_token_id: tokenizer.ids["<|endoftext|>"],
    eos_token_id: [tokenizer.ids["<|im_end|>"], tokenizer.ids["<|endoftext|>"]],
    do_sample: false,
    temperature: 0.0,
    max_new_tokens: 256,
  };
}

/**
 * Initial weights, GPT-2 style: every linear layer and the embedding uniform with standard
 * deviation 0.02, the residual outputs (o_proj, down_proj) scaled by 1/√(2·layers) so the residual
 * stream does not grow with depth, norms 1, biases 0. Uniform draws from SplitMix32 make the same
 * bytes on every platform.
 */
export function initialTensors(shape: TinyChatShape, vocabSize: number, seed: number): TensorToWrite[] {
  const random = new SeededRandom(seed);
  const std = 0.02;
  const tensors: TensorToWrite[] = [];
  const push = (name: string, dims: number[], values: Float32Array) => tensors.push({ name, dtype: "F32", shape: dims, data: encodeFloats("F32", values) });
  // A uniform distribution on [-a, a] has standard deviation a/√3.
  const uniform = (name: string, dims: number[], deviation: number) => push(name, dims, random.uniform(dims[0]! * dims[1]!, deviation * Math.sqrt(3)));
  const { hiddenSize: hidden, numHeads, numKvHeads, intermediateSize: intermediate, numLayers } = shape;
  const headDim = hidden / numHeads;
  const residual = std / Math.sqrt(2 * numLayers);
  uniform("model.embed_tokens.weight", [vocabSize, hidden], std);
  for (let layer = 0; layer < numLayers; layer++) {
    const prefix = `model.layers.${layer}`;
    push(`${prefix}.input_layernorm.weight`, [hidden], new Float32Array(hidden).fill(1));
    for (const [name, rows] of [
      ["q_proj", numHeads * headDim],
      ["k_proj", numKvHeads * headDim],
      ["v_proj", numKvHeads * headDim],
    ] as const) {
      uniform(`${prefix}.self_attn.${name}.weight`, [rows, hidden], std);
      push(`${prefix}.self_attn.${name}.bias`, [rows], new Float32Array(rows));
    }
    uniform(`${prefix}.self_attn.o_proj.weight`, [hidden, numHeads * headDim], residual);
    push(`${prefix}.post_attention_layernorm.weight`, [hidden], new Float32Array(hidden).fill(1));
    uniform(`${prefix}.mlp.gate_proj.weight`, [intermediate, hidden], std);
    uniform(`${prefix}.mlp.up_proj.weight`, [intermediate, hidden], std);
    uniform(`${prefix}.mlp.down_proj.weight`, [hidden, intermediate], residual);
  }
  push("model.norm.weight", [hidden], new Float32Array(hidden).fill(1));
  return tensors;
}

/** Writes a complete Hugging Face checkpoint directory: config, weights, tokenizer, generation config. */
export function writeModelDir(dir: string, files: { config: Record<string, unknown>; tokenizer: FixtureTokenizerFiles; tensors: readonly TensorToWrite[] }): void {
  fs.mkdirSync(dir, { recursive: true });
  writeCheckpointTensors(dir, files.tensors);
  const write = (name: string, value: unknown) => fs.writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
  write("config.json", files.config);
  write("generation_config.json", tinyChatGenerationConfig(files.tokenizer));
  write("tokenizer.json", files.tokenizer.tokenizerJson);
  write("tokenizer_config.json", files.tokenizer.tokenizerConfig);
}
