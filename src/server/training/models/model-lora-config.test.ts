import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SafetensorsReader } from "../../../engine/checkpoint/safetensors.js";
import { loadLoraAdapter } from "../../../engine/lora/files.js";
import type { TestApp } from "../../../testing/app.js";
import { loadTinyModel } from "../../../testing/models.js";
import { artChoice, promptIds, sampleCompletion } from "../../../testing/sampled-choices.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { createRlJob, isTerminal, waitForJob } from "../../../testing/training.js";

const messages = [{ role: "user", content: "Name a color." }];

/** Issue 14 item 3: a model's LoRA rank, alpha and targets, validated, trained with, served and exported. */
describe.each(testDialects)("a model's LoRA configuration on %s", (dialect) => {
  let t: TestApp;
  const work = makeTempDir("flywheel-lora-config-");
  beforeAll(async () => {
    t = await startTrainingApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const register = (name: string, extra: Record<string, unknown>) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name, base_model: TINY_BASE_MODEL, ...extra } });

  it("defaults to rank 8, alpha 16 on all linear layers", async () => {
    const res = await register("default-lora", {});
    expect(res.json().lora_config).toEqual({ r: 8, lora_alpha: 16, target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] });
  });

  it("trains the asked-for adapter (ART's rank 32, alpha 32), serves it and writes it into adapter_config.json", async () => {
    const res = await register("rank32", { lora_config: { r: 32, lora_alpha: 32, target_modules: ["q_proj", "v_proj"] } });
    expect(res.statusCode, res.body).toBe(200);
    const model = res.json();
    expect(model.lora_config).toEqual({ r: 32, lora_alpha: 32, target_modules: ["q_proj", "v_proj"] });

    const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: "blue, like the sky" }] });
    const upload = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "colors", files: [{ name: "train.jsonl", text: `${Array(4).fill(row).join("\n")}\n` }] } });
    const job = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: model.id, training_data_url: upload.json().url, config: { learning_rate: 2e-2 } } });
    expect(await waitForJob(t, job.json().id, isTerminal, t.keys.alice, 60_000)).toMatchObject({ status: "succeeded" });

    const download = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${model.id}/checkpoints/1/download` });
    expect(download.statusCode).toBe(200);
    const archive = path.join(work, `${dialect}.tar.gz`);
    fs.writeFileSync(archive, download.rawPayload);
    expect(spawnSync("tar", ["-xzf", archive, "-C", work]).status).toBe(0);
    const dir = path.join(work, "rank32-step1");
    const config = JSON.parse(fs.readFileSync(path.join(dir, "adapter_config.json"), "utf8"));
    expect(config).toMatchObject({ r: 32, lora_alpha: 32, target_modules: ["q_proj", "v_proj"], peft_type: "LORA" });
    const weights = SafetensorsReader.open(path.join(dir, "adapter_model.safetensors"));
    try {
      const names = weights.names();
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((name) => /\.(q_proj|v_proj)\.lora_[AB]\.weight$/.test(name))).toBe(true);
      expect(weights.entry("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight").shape[0]).toBe(32);
    } finally {
      weights.close();
    }

    const chat = (name: string) => t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: { model: name, messages, temperature: 0, max_completion_tokens: 6, logprobs: true } });
    const trained = await chat("wandb-artifact:///alice/p/rank32:step1");
    expect(trained.statusCode, trained.body).toBe(200);
    const base = await chat(TINY_BASE_MODEL);
    const logprobsOf = (res: typeof base) => res.json().choices[0].logprobs.content.map((entry: { logprob: number }) => entry.logprob);
    expect(logprobsOf(trained)).not.toEqual(logprobsOf(base));
  }, 120_000);

  it("trains an RL job with the model's adapter shape too", async () => {
    const model = loadTinyModel("qwen2");
    const modelId = (await register("rl-rank2", { lora_config: { r: 2, lora_alpha: 4, target_modules: ["gate_proj", "up_proj"] } })).json().id;
    const prompt = promptIds(model, messages);
    const completions = [0, 1, 2, 3].map((seed) => sampleCompletion(model, prompt, { seed: seed + 40, maxTokens: 8 }));
    const groups = [{ trajectories: completions.map((completion, i) => ({ reward: i % 2, messages_and_choices: [...messages, artChoice(model, completion)] })) }];
    const jobId = await createRlJob(t, modelId, groups, t.keys.alice, { experimental_config: { learning_rate: 5e-3 } });
    expect(await waitForJob(t, jobId, isTerminal, t.keys.alice, 60_000)).toMatchObject({ status: "succeeded", step: 1 });
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", 1).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    const adapter = loadLoraAdapter({ configFile: t.blobs.localPath(files["adapter_config.json"]!), weightsFile: t.blobs.localPath(files["adapter_model.safetensors"]!) }, model);
    expect(adapter.config).toMatchObject({ rank: 2, alpha: 4, targetModules: ["gate_proj", "up_proj"] });
    expect(
      adapter
        .modules()
        .map((module) => module.name)
        .sort(),
    ).toEqual(Array(model.config.numLayers).fill(["gate_proj", "up_proj"]).flat().sort());
  }, 60_000);

  it("refuses a configuration it cannot train with a 422 naming the field", async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{ r: 0 }, ["body", "lora_config", "r"]],
      [{ r: 65 }, ["body", "lora_config", "r"]],
      [{ r: 2.5 }, ["body", "lora_config", "r"]],
      [{ lora_alpha: 0 }, ["body", "lora_config", "lora_alpha"]],
      [{ target_modules: [] }, ["body", "lora_config", "target_modules"]],
      [{ target_modules: ["lm_head"] }, ["body", "lora_config", "target_modules"]],
      [{ target_modules: "everything" }, ["body", "lora_config", "target_modules"]],
    ];
    for (const [loraConfig, loc] of cases) {
      const res = await register("refused", { lora_config: loraConfig });
      expect(res.statusCode, JSON.stringify(loraConfig)).toBe(422);
      expect(res.json().detail[0].loc.slice(0, loc.length)).toEqual(loc);
    }
  });
});
