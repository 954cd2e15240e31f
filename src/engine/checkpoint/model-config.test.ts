import { describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { tinyModel } from "../../testing/models.js";
import { parseModelConfig, readModelConfig } from "./model-config.js";

const base = { model_type: "llama", vocab_size: 100, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4 };
const FILE = "/models/x/config.json";
const parse = (overrides: Record<string, unknown>) => parseModelConfig({ ...base, ...overrides }, FILE);

describe("config.json", () => {
  it("normalizes the fixture configs of every architecture", () => {
    const llama = readModelConfig(tinyModel("llama").dir);
    expect(llama).toMatchObject({ architecture: "llama", hiddenSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 16, qkvBias: false, qkNorm: false, tieWordEmbeddings: false, torchDtype: "float32" });
    expect(llama.ropeScaling).toEqual({ type: "llama3", factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 256 });
    const qwen2 = readModelConfig(tinyModel("qwen2").dir);
    expect(qwen2).toMatchObject({ architecture: "qwen2", qkvBias: true, outputBias: false, qkNorm: false, ropeTheta: 1e6, ropeScaling: null });
    const qwen3 = readModelConfig(tinyModel("qwen3").dir);
    expect(qwen3).toMatchObject({ architecture: "qwen3", headDim: 32, qkvBias: false, qkNorm: true, tieWordEmbeddings: true });
    expect(qwen3.eosTokenIds).toHaveLength(1);
  });

  it("applies the transformers defaults to optional fields", () => {
    const config = parse({});
    expect(config).toMatchObject({ numKvHeads: 4, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, ropeScaling: null, maxPositionEmbeddings: 2048, tieWordEmbeddings: false, mlpBias: false, torchDtype: undefined, eosTokenIds: [] });
    expect(parse({ model_type: "qwen2" }).maxPositionEmbeddings).toBe(32768);
    expect(parse({ eos_token_id: [5, 7], bos_token_id: 1 })).toMatchObject({ eosTokenIds: [5, 7], bosTokenId: 1 });
    expect(parse({ attention_bias: true })).toMatchObject({ qkvBias: true, outputBias: true });
    expect(parse({ model_type: "qwen2", attention_bias: true })).toMatchObject({ qkvBias: true, outputBias: false });
    expect(parse({ dtype: "bfloat16" }).torchDtype).toBe("bfloat16");
  });

  it("reads RoPE settings in the transformers 4 and 5 forms", () => {
    const llama3 = { rope_type: "llama3", factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    expect(parse({ rope_theta: 500000, rope_scaling: llama3 })).toMatchObject({ ropeTheta: 500000, ropeScaling: { type: "llama3", factor: 32 } });
    expect(parse({ rope_parameters: { ...llama3, rope_theta: 500000 } })).toMatchObject({ ropeTheta: 500000, ropeScaling: { originalMaxPositionEmbeddings: 8192 } });
    expect(parse({ rope_parameters: { rope_type: "default", rope_theta: 1e6 } })).toMatchObject({ ropeTheta: 1e6, ropeScaling: null });
    expect(parse({ rope_scaling: { type: "default" } }).ropeScaling).toBeNull();
  });

  it("names the file and field of everything missing, malformed or unsupported", () => {
    expectCheckpointError(() => parseModelConfig({ ...base, model_type: undefined }, FILE), FILE, "model_type", /is missing \(supported: llama, qwen2, qwen3\)/);
    expectCheckpointError(() => parse({ model_type: "mistral" }), FILE, "model_type", /"mistral" is not supported/);
    expectCheckpointError(() => parseModelConfig({ ...base, hidden_size: undefined }, FILE), FILE, "hidden_size", /is missing/);
    expectCheckpointError(() => parse({ num_hidden_layers: 2.5 }), FILE, "num_hidden_layers", /must be an integer, got 2.5/);
    expectCheckpointError(() => parse({ vocab_size: "100" }), FILE, "vocab_size", /must be an integer/);
    expectCheckpointError(() => parse({ intermediate_size: 0 }), FILE, "intermediate_size", /must be at least 1/);
    expectCheckpointError(() => parse({ num_key_value_heads: 3 }), FILE, "num_key_value_heads", /must divide num_attention_heads \(4\)/);
    expectCheckpointError(() => parse({ hidden_size: 30 }), FILE, "head_dim", /not a multiple of num_attention_heads/);
    expectCheckpointError(() => parse({ head_dim: 7 }), FILE, "head_dim", /must be even/);
    expectCheckpointError(() => parse({ hidden_act: "gelu" }), FILE, "hidden_act", /"gelu" is not supported/);
    expectCheckpointError(() => parse({ model_type: "qwen2", use_sliding_window: true }), FILE, "use_sliding_window", /not supported/);
    expectCheckpointError(() => parse({ rms_norm_eps: -1 }), FILE, "rms_norm_eps", /must be > 0/);
    expectCheckpointError(() => parse({ rope_scaling: { rope_type: "yarn", factor: 4 } }), FILE, "rope_scaling.rope_type", /"yarn" is not supported/);
    expectCheckpointError(() => parse({ rope_scaling: { rope_type: "llama3", factor: 8, low_freq_factor: 1, high_freq_factor: 4 } }), FILE, "rope_scaling.original_max_position_embeddings", /is missing/);
    expectCheckpointError(
      () => parse({ rope_scaling: { rope_type: "llama3", factor: 8, low_freq_factor: 4, high_freq_factor: 1, original_max_position_embeddings: 10 } }),
      FILE,
      "rope_scaling.high_freq_factor",
      /greater than low_freq_factor/,
    );
    expectCheckpointError(() => parse({ rope_scaling: "linear" }), FILE, "rope_scaling", /must be an object/);
    expectCheckpointError(() => parse({ torch_dtype: "float8" }), FILE, "torch_dtype", /"float8" is not supported/);
    expectCheckpointError(() => parse({ eos_token_id: ["a"] }), FILE, "eos_token_id", /token id or a list of token ids/);
    expectCheckpointError(() => parse({ tie_word_embeddings: "yes" }), FILE, "tie_word_embeddings", /must be true or false/);
  });

  it("reports a missing or broken file", () => {
    const dir = "/nonexistent/model";
    expectCheckpointError(() => readModelConfig(dir), `${dir}/config.json`, undefined, /is missing/);
  });
});
