import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { loadTinyModel, tinyModel } from "../../testing/models.js";
import { makeTempDir } from "../../testing/stores.js";
import { CHATML_TEMPLATE } from "../fixtures/chatml-template.js";
import { makeTinyModel } from "../fixtures/tiny-model.js";
import { TsKernels } from "../kernels/ts/index.js";
import { loadModel, modelInfo } from "./load.js";

const root = makeTempDir("flywheel-load-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const kernels = new TsKernels();

/** A fresh fixture copy to break. */
function copyOf(architecture: "llama" | "qwen2" | "qwen3", name: string, options = {}): string {
  const dir = path.join(root, name);
  makeTinyModel(dir, { architecture, ...options });
  return dir;
}

function editJson(file: string, edit: (json: Record<string, unknown>) => void): void {
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  edit(json);
  fs.writeFileSync(file, JSON.stringify(json));
}

describe("loadModel", () => {
  it("gathers config, tokenizer, chat template and generation defaults", () => {
    const model = loadTinyModel("qwen2");
    const { tokenIds } = tinyModel("qwen2");
    expect(model.config.architecture).toBe("qwen2");
    expect(model.chatTemplates.default).toBe(CHATML_TEMPLATE);
    expect(model.generationDefaults).toEqual({ temperature: 0.7, top_p: 0.8, top_k: 20, repetition_penalty: 1.05 });
    expect(model.eosTokenIds).toEqual([tokenIds["<|im_end|>"], tokenIds["<|endoftext|>"]]);
    expect(model.templateSpecialTokens).toEqual({ eos_token: "<|im_end|>", pad_token: "<|endoftext|>", additional_special_tokens: ["<|im_start|>", "<|im_end|>"] });
    expect(model.tokenizer.vocabSize).toBeLessThanOrEqual(model.config.vocabSize);
    expect(model.transformer.kernels.name).toBe("ts");
    expect(modelInfo("flywheel/tiny", model)).toEqual({
      id: "flywheel/tiny",
      architecture: "qwen2",
      maxModelLen: 2048,
      vocabSize: 576,
      chatTemplates: { default: CHATML_TEMPLATE, named: {} },
      generationDefaults: model.generationDefaults,
      eosTokenIds: model.eosTokenIds,
      templateSpecialTokens: model.templateSpecialTokens,
      priorityScheduling: false,
    });
  });

  it("ties the output projection to the embedding when configured", () => {
    const model = loadTinyModel("qwen3");
    expect(model.config.tieWordEmbeddings).toBe(true);
    expect(model.transformer.weights.lmHead).toBe(model.transformer.weights.embedTokens);
    expect(loadTinyModel("llama").transformer.weights.lmHead).not.toBe(loadTinyModel("llama").transformer.weights.embedTokens);
  });

  it("names the file and field when the pieces do not fit together", () => {
    const small = copyOf("qwen2", "small-vocab");
    editJson(path.join(small, "config.json"), (json) => (json.vocab_size = 100));
    expectCheckpointError(() => loadModel(small, { kernels }), path.join(small, "config.json"), "vocab_size", /is 100, but tokenizer.json defines 570 tokens/);

    const eos = copyOf("qwen2", "bad-eos");
    editJson(path.join(eos, "generation_config.json"), (json) => (json.eos_token_id = [9999]));
    expectCheckpointError(() => loadModel(eos, { kernels }), path.join(eos, "generation_config.json"), "eos_token_id", /9999 is outside the vocabulary/);

    const untied = copyOf("llama", "untied");
    editJson(path.join(untied, "config.json"), (json) => (json.num_hidden_layers = 3));
    expectCheckpointError(() => loadModel(untied, { kernels }), path.join(untied, "model.safetensors"), "model.layers.2.input_layernorm.weight", /is missing/);

    const shape = copyOf("qwen3", "shape", { shards: 2 });
    editJson(path.join(shape, "config.json"), (json) => (json.intermediate_size = 100));
    expectCheckpointError(() => loadModel(shape, { kernels }), path.join(shape, "model-00001-of-00002.safetensors"), "model.layers.0.mlp.gate_proj.weight", /has shape \[128, 64\], but config.json implies \[100, 64\]/);

    const noHead = copyOf("qwen3", "no-head");
    editJson(path.join(noHead, "config.json"), (json) => (json.tie_word_embeddings = false));
    expectCheckpointError(() => loadModel(noHead, { kernels }), path.join(noHead, "model.safetensors"), "lm_head.weight", /is missing/);

    const noTokenizer = copyOf("llama", "no-tokenizer");
    fs.rmSync(path.join(noTokenizer, "tokenizer.json"));
    expectCheckpointError(() => loadModel(noTokenizer, { kernels }), path.join(noTokenizer, "tokenizer.json"), undefined, /is missing/);
  });
});
