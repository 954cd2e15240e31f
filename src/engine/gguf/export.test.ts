import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tinyModel } from "../../testing/models.js";
import { decodeFloats, encodeFloats } from "../checkpoint/dtype.js";
import { readModelConfig } from "../checkpoint/model-config.js";
import { CheckpointTensors } from "../checkpoint/tensors.js";
import { ropeInverseFrequencies } from "../model/rope.js";
import { exportGguf, interleaveRotaryHalves } from "./export.js";
import { GgmlType, TokenType } from "./format.js";
import { type GgufFile, readGguf, readGgufTensor } from "./reader.js";

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-gguf-export-"));
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

const value = (file: GgufFile, key: string) => file.metadata.get(key)?.value;

function tensorValues(file: string, gguf: GgufFile, name: string): Float32Array {
  const tensor = gguf.tensors.find((t) => t.name === name);
  if (!tensor) throw new Error(`no tensor ${name}`);
  const bytes = readGgufTensor(file, tensor);
  return decodeFloats(tensor.type === GgmlType.F32 ? "F32" : tensor.type === GgmlType.F16 ? "F16" : "BF16", bytes);
}

describe("exportGguf", () => {
  it("writes a qwen2 model llama.cpp can load: hyperparameters, tokenizer, tensors", () => {
    const model = tinyModel("qwen2", { dtype: "f16" });
    const file = path.join(outDir, "qwen2.gguf");
    const summary = exportGguf(model.dir, file, { name: "tiny-qwen2" });
    const gguf = readGguf(file);
    const config = model.config as Record<string, number>;
    expect(summary).toEqual({ architecture: "qwen2", dtype: "f16", tensors: gguf.tensors.length, paddingTokens: config.vocab_size! - model.tokenizerSize });
    expect(summary.paddingTokens).toBeGreaterThan(0);

    expect(value(gguf, "general.architecture")).toBe("qwen2");
    expect(value(gguf, "general.name")).toBe("tiny-qwen2");
    expect(value(gguf, "general.file_type")).toBe(1);
    expect(value(gguf, "qwen2.block_count")).toBe(config.num_hidden_layers);
    expect(value(gguf, "qwen2.embedding_length")).toBe(config.hidden_size);
    expect(value(gguf, "qwen2.feed_forward_length")).toBe(config.intermediate_size);
    expect(value(gguf, "qwen2.attention.head_count")).toBe(config.num_attention_heads);
    expect(value(gguf, "qwen2.attention.head_count_kv")).toBe(config.num_key_value_heads);
    expect(value(gguf, "qwen2.context_length")).toBe(config.max_position_embeddings);
    expect(value(gguf, "qwen2.rope.freq_base")).toBe(1e6);
    expect(value(gguf, "qwen2.attention.layer_norm_rms_epsilon")).toBeCloseTo(1e-6, 12);

    // Tokenizer: one token per embedding row; the rows past the tokenizer are UNUSED placeholders.
    const tokens = value(gguf, "tokenizer.ggml.tokens") as string[];
    const types = value(gguf, "tokenizer.ggml.token_type") as number[];
    expect(tokens).toHaveLength(config.vocab_size!);
    expect(types).toHaveLength(config.vocab_size!);
    const tokenizerJson = JSON.parse(fs.readFileSync(path.join(model.dir, "tokenizer.json"), "utf8"));
    for (const [piece, id] of Object.entries(tokenizerJson.model.vocab) as [string, number][]) {
      expect(tokens[id]).toBe(piece);
      expect(types[id]).toBe(TokenType.NORMAL);
    }
    const ids = model.tokenIds;
    expect(tokens[ids["<|im_end|>"]!]).toBe("<|im_end|>");
    expect(types[ids["<|im_end|>"]!]).toBe(TokenType.CONTROL);
    expect(types[ids["<think>"]!]).toBe(TokenType.USER_DEFINED);
    expect(tokens[model.tokenizerSize]).toBe(`[PAD${model.tokenizerSize}]`);
    expect(types[config.vocab_size! - 1]).toBe(TokenType.UNUSED);
    expect(value(gguf, "tokenizer.ggml.model")).toBe("gpt2");
    expect(value(gguf, "tokenizer.ggml.pre")).toBe("gpt-2");
    const merges = value(gguf, "tokenizer.ggml.merges") as string[];
    expect(merges).toEqual(tokenizerJson.model.merges.map((pair: string[]) => pair.join(" ")));
    expect(value(gguf, "tokenizer.ggml.eos_token_id")).toBe(ids["<|im_end|>"]);
    expect(value(gguf, "tokenizer.ggml.padding_token_id")).toBe(ids["<|endoftext|>"]);
    expect(value(gguf, "tokenizer.ggml.bos_token_id")).toBe(ids["<|endoftext|>"]); // config.json's bos_token_id
    expect(value(gguf, "tokenizer.ggml.add_bos_token")).toBe(false);
    const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(model.dir, "tokenizer_config.json"), "utf8"));
    expect(value(gguf, "tokenizer.chat_template")).toBe(tokenizerConfig.chat_template);

    // Tensors: llama.cpp names and shapes; 2-D weights keep f16 bytes exactly, 1-D ones become f32.
    const checkpoint = CheckpointTensors.open(model.dir);
    try {
      const names = gguf.tensors.map((tensor) => tensor.name);
      expect(names).toContain("blk.1.attn_q.bias");
      expect(names).toContain("output.weight"); // the qwen2 fixture is untied
      expect(names).not.toContain("blk.0.attn_q_norm.weight");
      for (const tensor of gguf.tensors) expect(tensor.offset % gguf.alignment).toBe(0);
      const embed = gguf.tensors.find((t) => t.name === "token_embd.weight")!;
      expect(embed.shape).toEqual([config.vocab_size, config.hidden_size]);
      expect(embed.type).toBe(GgmlType.F16);
      expect(Buffer.from(readGgufTensor(file, embed)).equals(Buffer.from(checkpoint.readFloat("model.embed_tokens.weight").data))).toBe(true);
      const norm = gguf.tensors.find((t) => t.name === "blk.0.ffn_norm.weight")!;
      expect(norm.type).toBe(GgmlType.F32);
      const stored = checkpoint.readFloat("model.layers.0.post_attention_layernorm.weight");
      expect(tensorValues(file, gguf, "blk.0.ffn_norm.weight")).toEqual(decodeFloats(stored.dtype, stored.data));
      const down = checkpoint.readFloat("model.layers.1.mlp.down_proj.weight");
      expect(tensorValues(file, gguf, "blk.1.ffn_down.weight")).toEqual(decodeFloats(down.dtype, down.data));
    } finally {
      checkpoint.close();
    }
  });

  it("converts precision on request and keeps qwen3's q/k norms, tied embeddings and head_dim", () => {
    const model = tinyModel("qwen3", { dtype: "f16" });
    const file = path.join(outDir, "qwen3-bf16.gguf");
    expect(exportGguf(model.dir, file, { dtype: "bf16" }).dtype).toBe("bf16");
    const gguf = readGguf(file);
    const config = readModelConfig(model.dir);
    expect(value(gguf, "general.file_type")).toBe(32);
    expect(value(gguf, "qwen3.attention.key_length")).toBe(config.headDim);
    expect(config.headDim * config.numHeads).not.toBe(config.hiddenSize);
    const names = gguf.tensors.map((tensor) => tensor.name);
    expect(names).toContain("blk.0.attn_k_norm.weight");
    expect(names).not.toContain("output.weight");
    expect(names).not.toContain("blk.0.attn_q.bias");
    const checkpoint = CheckpointTensors.open(model.dir);
    try {
      const up = checkpoint.readFloat("model.layers.0.mlp.up_proj.weight");
      const expected = encodeFloats("BF16", decodeFloats("F16", up.data));
      const tensor = gguf.tensors.find((t) => t.name === "blk.0.ffn_up.weight")!;
      expect(tensor.type).toBe(GgmlType.BF16);
      expect(Buffer.from(readGgufTensor(file, tensor)).equals(Buffer.from(expected))).toBe(true);
    } finally {
      checkpoint.close();
    }
  });

  it("permutes llama's q/k to interleaved RoPE pairs and writes Llama 3.1 scaling as rope_freqs", () => {
    const model = tinyModel("llama");
    const file = path.join(outDir, "llama.gguf");
    exportGguf(model.dir, file);
    const gguf = readGguf(file);
    const config = readModelConfig(model.dir);
    expect(value(gguf, "general.file_type")).toBe(0);
    expect(value(gguf, "tokenizer.ggml.bos_token_id")).toBe(model.tokenIds["<|begin_of_text|>"]);
    expect(value(gguf, "llama.rope.dimension_count")).toBe(config.headDim);

    const checkpoint = CheckpointTensors.open(model.dir);
    try {
      const qTensor = checkpoint.readFloat("model.layers.0.self_attn.q_proj.weight");
      const q = decodeFloats(qTensor.dtype, qTensor.data);
      const kTensor = checkpoint.readFloat("model.layers.0.self_attn.k_proj.weight");
      const k = decodeFloats(kTensor.dtype, kTensor.data);
      expect(tensorValues(file, gguf, "blk.0.attn_q.weight")).toEqual(interleaveRotaryHalves(q, config.numHeads, config.headDim));
      expect(tensorValues(file, gguf, "blk.0.attn_k.weight")).toEqual(interleaveRotaryHalves(k, config.numKvHeads, config.headDim));
      const v = checkpoint.readFloat("model.layers.0.self_attn.v_proj.weight");
      expect(tensorValues(file, gguf, "blk.0.attn_v.weight")).toEqual(decodeFloats(v.dtype, v.data));
    } finally {
      checkpoint.close();
    }

    // llama.cpp divides each base frequency by its rope_freqs entry: that must give our scaled frequencies.
    const factors = tensorValues(file, gguf, "rope_freqs.weight");
    const plain = ropeInverseFrequencies({ ...config, ropeScaling: null });
    const scaled = ropeInverseFrequencies(config);
    expect(factors).toHaveLength(config.headDim / 2);
    factors.forEach((factor, i) => expect(plain[i]! / factor).toBeCloseTo(scaled[i]!, 6));
    expect(Math.max(...factors)).toBeCloseTo(8, 5);
    expect(Math.min(...factors)).toBe(1);
  });

  it("interleaving rows turns rotate-half RoPE into pairwise RoPE of the same vectors", () => {
    const [heads, headDim] = [2, 8];
    const half = headDim / 2;
    const q = Float32Array.from({ length: heads * headDim }, (_, i) => Math.sin(i + 1));
    const angle = (i: number) => 0.7 * (i + 1);
    const rotateHalf = new Float32Array(q.length);
    const pairwise = new Float32Array(q.length);
    const permuted = interleaveRotaryHalves(q, heads, headDim);
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < half; i++) {
        const [c, s] = [Math.cos(angle(i)), Math.sin(angle(i))];
        const [a, b] = [q[h * headDim + i]!, q[h * headDim + i + half]!];
        rotateHalf[h * headDim + i] = a * c - b * s;
        rotateHalf[h * headDim + i + half] = b * c + a * s;
        const [x, y] = [permuted[h * headDim + 2 * i]!, permuted[h * headDim + 2 * i + 1]!];
        pairwise[h * headDim + 2 * i] = x * c - y * s;
        pairwise[h * headDim + 2 * i + 1] = y * c + x * s;
      }
    }
    expect(pairwise).toEqual(interleaveRotaryHalves(rotateHalf, heads, headDim));
  });

  it("refuses a tokenizer whose pre-tokenizer llama.cpp does not implement", () => {
    const model = tinyModel("qwen2");
    const copy = path.join(outDir, "odd-tokenizer");
    fs.cpSync(model.dir, copy, { recursive: true });
    const json = JSON.parse(fs.readFileSync(path.join(copy, "tokenizer.json"), "utf8"));
    json.pre_tokenizer = { type: "Whitespace" };
    fs.writeFileSync(path.join(copy, "tokenizer.json"), JSON.stringify(json));
    expect(() => exportGguf(copy, path.join(outDir, "odd.gguf"))).toThrow(/'pre_tokenizer' is not one llama.cpp implements/);
  });
});
