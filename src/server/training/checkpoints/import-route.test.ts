import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadLoraAdapter } from "../../../engine/lora/files.js";
import { loadModel } from "../../../engine/model/load.js";
import { TsKernels } from "../../../engine/kernels/ts/index.js";
import type { TestApp } from "../../../testing/app.js";
import { tinyModel } from "../../../testing/models.js";
import { runTestPython, testPython } from "../../../testing/python-env.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { isTerminal, waitForJob } from "../../../testing/training.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const makeAdapter = path.join(here, "..", "..", "..", "testing", "python", "make_peft_adapter.py");
const messages = [{ role: "user", content: "Name a color." }];

/** Issue 14 item 5: a PEFT adapter made elsewhere, uploaded as an artifact, becomes a checkpoint that is served and trained on. */
describe.each(testDialects)("importing a PEFT adapter on %s", (dialect) => {
  let t: TestApp;
  const work = makeTempDir("flywheel-import-");
  const adapterDir = path.join(work, "adapter");
  const baseDir = tinyModel("qwen2").dir;
  const model = loadModel(baseDir, { kernels: new TsKernels() });
  const tokens = model.tokenizer.encode("Name a color. blue");
  let peftLogits: number[][];
  beforeAll(async () => {
    const python = testPython();
    peftLogits = runTestPython<{ logits: number[][] }>(python, makeAdapter, { base: baseDir, out: adapterDir, r: 4, lora_alpha: 8, target_modules: ["q_proj", "o_proj", "down_proj"], seed: 3, tokens }).logits;
    t = await startTrainingApp(dialect);
  }, 900_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const upload = async (name: string, files: Record<string, Buffer>, key = t.keys.alice) => {
    const res = await t.request(key, {
      method: "POST",
      url: "/v1/preview/artifacts",
      payload: { project: "p", name, type: "lora", files: Object.entries(files).map(([file, bytes]) => ({ name: file, base64: bytes.toString("base64") })) },
    });
    return res.json().url as string;
  };
  const adapterFiles = () => Object.fromEntries(["adapter_config.json", "adapter_model.safetensors"].map((name) => [name, fs.readFileSync(path.join(adapterDir, name))]));
  const register = async (name: string) => (await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name, base_model: TINY_BASE_MODEL } })).json().id as string;
  const importInto = (modelId: string, artifactUrl: string, key = t.keys.alice) => t.request(key, { method: "POST", url: `/v1/preview/models/${modelId}/checkpoints/import`, payload: { artifact_url: artifactUrl } });

  it("serves the adapter as PEFT computes it (within 1e-4), then trains on from it", async () => {
    const modelId = await register("imported");
    const res = await importInto(modelId, await upload("peft-adapter", adapterFiles()));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ step: 0, name: "wandb-artifact:///alice/p/imported:step0" });
    const read = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}` })).json();
    expect(read.lora_config).toMatchObject({ r: 4, lora_alpha: 8 });
    expect([...read.lora_config.target_modules].sort()).toEqual(["down_proj", "o_proj", "q_proj"]);

    // The checkpoint's stored files, as the engine loads them, give PEFT's logits.
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", 0).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    const adapter = loadLoraAdapter({ configFile: t.blobs.localPath(files["adapter_config.json"]!), weightsFile: t.blobs.localPath(files["adapter_model.safetensors"]!) }, model);
    const engine = model.transformer.forward([{ cache: model.transformer.createCache(tokens.length), tokens, logits: "all", adapter }])[0]!;
    const vocab = model.config.vocabSize;
    const worst = Math.max(...peftLogits.flatMap((row, p) => row.map((value, v) => Math.abs(value - engine[p * vocab + v]!))));
    expect(worst).toBeLessThan(1e-4);

    const chat = (name: string) => t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: { model: name, messages, temperature: 0, max_completion_tokens: 6, logprobs: true } });
    const served = await chat("wandb-artifact:///alice/p/imported:step0");
    expect(served.statusCode, served.body).toBe(200);
    const base = await chat(TINY_BASE_MODEL);
    const logprobsOf = (reply: typeof base) => reply.json().choices[0].logprobs.content.map((entry: { logprob: number }) => entry.logprob);
    expect(logprobsOf(served)).not.toEqual(logprobsOf(base));

    const line = JSON.stringify({ messages: [...messages, { role: "assistant", content: "blue" }] });
    const data = await upload("sft", { "train.jsonl": Buffer.from(`${line}\n${line}\n`) });
    const job = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: data, config: { learning_rate: 1e-2 } } });
    expect(await waitForJob(t, job.json().id, isTerminal, t.keys.alice, 60_000)).toMatchObject({ status: "succeeded" });
    const download = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints/1/download` });
    expect(download.statusCode).toBe(200);
    expect(logprobsOf(await chat("wandb-artifact:///alice/p/imported:step1"))).not.toEqual(logprobsOf(served));
  }, 120_000);

  it("refuses what is not an adapter for this base model with a 422, and another entity's model or artifact as unknown", async () => {
    const modelId = await register("refusing");
    const notAdapter = await importInto(modelId, await upload("not-adapter", { "train.jsonl": Buffer.from("{}\n") }));
    expect(notAdapter.statusCode).toBe(422);
    expect(notAdapter.json().detail[0]).toMatchObject({ loc: ["body", "artifact_url"] });
    expect(notAdapter.json().detail[0].msg).toContain("has no adapter_config.json or adapter_model.safetensors");

    const files = adapterFiles();
    const config = JSON.parse(files["adapter_config.json"]!.toString("utf8"));
    const wrongRank = await importInto(modelId, await upload("wrong-rank", { ...files, "adapter_config.json": Buffer.from(JSON.stringify({ ...config, r: 5 })) }));
    expect(wrongRank.statusCode).toBe(422);
    expect(wrongRank.json().detail[0].msg).toMatch(/^the adapter does not fit base model 'tiny\/qwen2': adapter_model.safetensors: .*r=5/);
    const dora = await importInto(modelId, await upload("dora", { ...files, "adapter_config.json": Buffer.from(JSON.stringify({ ...config, use_dora: true })) }));
    expect(dora.statusCode).toBe(422);
    expect(dora.json().detail[0].msg).toContain("adapter_config.json: 'use_dora' is true");

    const bobsArtifact = await upload("bobs", files, t.keys.bob);
    expect((await importInto(modelId, bobsArtifact)).statusCode).toBe(422);
    expect((await importInto(modelId, await upload("alices", files), t.keys.bob)).statusCode).toBe(404);
    // Nothing was imported by the refusals.
    expect((await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints` })).json().data).toEqual([]);
  });
});
