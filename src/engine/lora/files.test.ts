import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { randomizeAdapter } from "../../testing/lora.js";
import { loadTinyModel } from "../../testing/models.js";
import { encodeFloats } from "../checkpoint/dtype.js";
import { SafetensorsReader, writeSafetensors } from "../checkpoint/safetensors.js";
import { createLoraAdapter } from "./init.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, adapterFiles, loadLoraAdapter, parsePeftTensorName, peftTensorName, saveLoraAdapter } from "./files.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-lora-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => path.join(root, `adapter-${dirCount++}`);

const model = loadTinyModel("qwen2");

/** A saved adapter whose config.json and tensors a test may then tamper with. */
function savedAdapter(options: Parameters<typeof createLoraAdapter>[1] = {}) {
  const dir = freshDir();
  const adapter = randomizeAdapter(createLoraAdapter(model.config, { seed: 5, baseModelNameOrPath: "tiny/qwen2", ...options }), 6);
  saveLoraAdapter(dir, adapter);
  return { dir, adapter };
}

function editConfig(dir: string, edit: (json: Record<string, unknown>) => void): void {
  const file = path.join(dir, ADAPTER_CONFIG_FILE);
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  edit(json);
  fs.writeFileSync(file, JSON.stringify(json));
}

function rewriteTensors(dir: string, edit: (tensors: { name: string; shape: number[]; values: Float32Array }[]) => typeof tensors, dtype: "F32" | "BF16" = "F32") {
  const file = path.join(dir, ADAPTER_WEIGHTS_FILE);
  const reader = SafetensorsReader.open(file);
  const tensors = reader.names().map((name) => {
    const tensor = reader.readFloat(name);
    return { name, shape: tensor.shape, values: new Float32Array(tensor.data.buffer.slice(tensor.data.byteOffset, tensor.data.byteOffset + tensor.data.byteLength)) };
  });
  reader.close();
  writeSafetensors(
    file,
    edit(tensors).map((t) => ({ name: t.name, dtype, shape: t.shape, data: encodeFloats(dtype, t.values) })),
  );
}

describe("PEFT adapter files", () => {
  it("names tensors exactly as PEFT saves them", () => {
    expect(peftTensorName(0, "q_proj", "A")).toBe("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
    expect(peftTensorName(11, "down_proj", "B")).toBe("base_model.model.model.layers.11.mlp.down_proj.lora_B.weight");
    expect(parsePeftTensorName("base_model.model.model.layers.3.mlp.gate_proj.lora_B.weight")).toEqual({ layer: 3, name: "gate_proj", factor: "B" });
    expect(parsePeftTensorName("base_model.model.lm_head.lora_A.weight")).toBeUndefined();
    expect(parsePeftTensorName("base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector")).toBeUndefined();
  });

  it("writes adapter_config.json and adapter_model.safetensors in PEFT layout and reads them back", () => {
    const { dir, adapter } = savedAdapter();
    const config = JSON.parse(fs.readFileSync(path.join(dir, ADAPTER_CONFIG_FILE), "utf8"));
    expect(config).toMatchObject({
      peft_type: "LORA",
      task_type: "CAUSAL_LM",
      r: 8,
      lora_alpha: 16,
      lora_dropout: 0,
      bias: "none",
      fan_in_fan_out: false,
      use_rslora: false,
      use_dora: false,
      modules_to_save: null,
      base_model_name_or_path: "tiny/qwen2",
      target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    });
    expect(Object.keys(config)).toEqual([...Object.keys(config)].sort());

    const reader = SafetensorsReader.open(path.join(dir, ADAPTER_WEIGHTS_FILE));
    expect(reader.metadata).toEqual({ format: "pt" });
    expect(reader.names()).toHaveLength(2 * 7 * model.config.numLayers);
    expect(reader.entry("base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight")).toMatchObject({ dtype: "F32", shape: [8, model.config.hiddenSize] });
    expect(reader.entry("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight")).toMatchObject({ dtype: "F32", shape: [model.config.hiddenSize, 8] });
    reader.close();

    const loaded = loadLoraAdapter(dir, model);
    expect(loaded.config).toEqual(adapter.config);
    expect(loaded.scale).toBe(adapter.scale);
    expect(loaded.parameters()).toEqual(adapter.parameters());
  });

  it("gives the same files in memory, and loads them from paths of any name (a blob store's)", () => {
    const { dir, adapter } = savedAdapter();
    const files = adapterFiles(adapter);
    expect(Object.keys(files).sort()).toEqual([ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE]);
    for (const [name, bytes] of Object.entries(files)) expect(Buffer.from(bytes).equals(fs.readFileSync(path.join(dir, name)))).toBe(true);
    const blobs = freshDir();
    fs.mkdirSync(blobs);
    fs.writeFileSync(path.join(blobs, "3f9a"), files[ADAPTER_CONFIG_FILE]!);
    fs.writeFileSync(path.join(blobs, "c01d"), files[ADAPTER_WEIGHTS_FILE]!);
    const loaded = loadLoraAdapter({ configFile: path.join(blobs, "3f9a"), weightsFile: path.join(blobs, "c01d") }, model);
    expect(loaded.parameters()).toEqual(adapter.parameters());
  });

  it("loads bf16 factors, subsets of modules and rsLoRA configs", () => {
    const { dir } = savedAdapter({ targetModules: ["q_proj", "down_proj"], layersToTransform: [1], rank: 4, alpha: 8, useRslora: true });
    rewriteTensors(dir, (tensors) => tensors, "BF16");
    const loaded = loadLoraAdapter(dir, model);
    expect(loaded.modules().map((m) => `${m.layer}.${m.name}`)).toEqual(["1.q_proj", "1.down_proj"]);
    expect(loaded.scale).toBe(4);
  });

  it("refuses options it cannot apply, naming the file and the field", () => {
    const cases: [(json: Record<string, unknown>) => void, RegExp][] = [
      [(json) => (json.use_dora = true), /adapter_config\.json: 'use_dora' is true; DoRA adapters are not supported/],
      [(json) => (json.bias = "all"), /'bias' is "all"; only "none" is supported/],
      [(json) => (json.modules_to_save = ["lm_head"]), /'modules_to_save' is set/],
      [(json) => (json.rank_pattern = { q_proj: 4 }), /'rank_pattern' is set/],
      [(json) => (json.peft_type = "IA3"), /'peft_type' is "IA3"; only LORA/],
      [(json) => (json.task_type = "SEQ_CLS"), /'task_type' is "SEQ_CLS"/],
      [(json) => (json.fan_in_fan_out = true), /'fan_in_fan_out' is true/],
      [(json) => delete json.r, /'r' is missing/],
      [(json) => (json.lora_alpha = "16"), /'lora_alpha' must be a number/],
      [(json) => (json.target_modules = []), /'target_modules' must be a non-empty list/],
    ];
    for (const [edit, message] of cases) {
      const { dir } = savedAdapter();
      editConfig(dir, edit);
      expect(() => loadLoraAdapter(dir, model)).toThrow(message);
    }
  });

  it("checks every tensor against the base model", () => {
    const { dir: wrongRank } = savedAdapter();
    editConfig(wrongRank, (json) => (json.r = 4));
    expect(() => loadLoraAdapter(wrongRank, model)).toThrow(
      /adapter_model\.safetensors: 'base_model\.model\.model\.layers\.0\.mlp\.down_proj\.lora_A\.weight' has shape \[8, 128\], but r=4 and the base model's down_proj \(64 × 128\) imply \[4, 128\]/,
    );

    const { dir: otherModel } = savedAdapter();
    expect(() => loadLoraAdapter(otherModel, loadTinyModel("qwen2", { intermediateSize: 96 }))).toThrow(/mlp\.down_proj\.lora_A\.weight' has shape \[8, 128\], but r=8 and the base model's down_proj \(64 × 96\) imply \[8, 96\]/);

    const { dir: missingB } = savedAdapter();
    rewriteTensors(missingB, (tensors) => tensors.filter((t) => t.name !== peftTensorName(1, "up_proj", "B")));
    expect(() => loadLoraAdapter(missingB, model)).toThrow(/'base_model\.model\.model\.layers\.1\.mlp\.up_proj\.lora_B\.weight' is missing \(its lora_A is present\)/);

    const { dir: extra } = savedAdapter();
    rewriteTensors(extra, (tensors) => [...tensors, { name: "base_model.model.lm_head.lora_A.weight", shape: [8, 64], values: new Float32Array(512) }]);
    expect(() => loadLoraAdapter(extra, model)).toThrow(/'base_model\.model\.lm_head\.lora_A\.weight' is not a LoRA factor of a linear layer/);

    const { dir: untargeted } = savedAdapter();
    editConfig(untargeted, (json) => (json.target_modules = ["q_proj"]));
    expect(() => loadLoraAdapter(untargeted, model)).toThrow(/down_proj\.lora_A\.weight' is not covered by target_modules/);

    const { dir: deep } = savedAdapter();
    rewriteTensors(deep, (tensors) => [...tensors, { name: peftTensorName(9, "q_proj", "A"), shape: [8, 64], values: new Float32Array(512) }]);
    expect(() => loadLoraAdapter(deep, model)).toThrow(/is for layer 9, but the base model has 2 layers/);
  });

  it("reports missing files", () => {
    const empty = freshDir();
    fs.mkdirSync(empty);
    expect(() => loadLoraAdapter(empty, model)).toThrow(/adapter_config\.json: is missing/);
    const { dir } = savedAdapter();
    fs.rmSync(path.join(dir, ADAPTER_WEIGHTS_FILE));
    fs.writeFileSync(path.join(dir, "adapter_model.bin"), "");
    expect(() => loadLoraAdapter(dir, model)).toThrow(/adapter_model\.safetensors: is missing \(adapter_model\.bin pickles are not supported/);
  });
});
