import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadLoraAdapter } from "../../../engine/lora/files.js";
import { loadModel } from "../../../engine/model/load.js";
import { TsKernels } from "../../../engine/kernels/ts/index.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { tinyModel } from "../../../testing/models.js";
import { runTestPython, testPython } from "../../../testing/python-env.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { isTerminal, waitForJob } from "../../../testing/training.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const consumers = path.join(here, "..", "..", "..", "testing", "python", "export_consumers.py");

interface ConsumerReport {
  peft_logits: number[][];
  merged_logits: number[][];
  adapter_config: Record<string, unknown>;
  gguf: { architecture: string; tensor_count: number; linear_max_abs_difference: Record<string, number> };
}

/** Issue 14 item 1: a checkpoint downloads as a PEFT adapter, a merged model and a GGUF file that the real consumers load. */
describe.each(testDialects)("checkpoint download on %s", (dialect) => {
  let t: TestApp;
  let modelId: string;
  let python: string;
  const work = makeTempDir("flywheel-download-");
  beforeAll(async () => {
    python = testPython();
    t = await startTrainingApp(dialect);
    const register = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "exported", base_model: TINY_BASE_MODEL } });
    modelId = register.json().id;
    const row = JSON.stringify({
      messages: [
        { role: "user", content: "Name a color." },
        { role: "assistant", content: "blue, like the sky" },
      ],
    });
    const upload = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "colors", files: [{ name: "train.jsonl", text: `${Array(4).fill(row).join("\n")}\n` }] } });
    const job = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: upload.json().url, config: { learning_rate: 2e-2 } } });
    expect(await waitForJob(t, job.json().id, isTerminal, t.keys.alice, 60_000)).toMatchObject({ status: "succeeded" });
  }, 900_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const download = (step: number, query = "", key = t.keys.alice) => t.request(key, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints/${step}/download${query}` });

  /** Extracts a .tar.gz body with the system's tar into a fresh directory; returns that directory. */
  const untar = (body: Buffer, name: string): string => {
    const dir = path.join(work, name);
    fs.mkdirSync(dir, { recursive: true });
    const archive = path.join(work, `${name}.tar.gz`);
    fs.writeFileSync(archive, body);
    const run = spawnSync("tar", ["-xzf", archive, "-C", dir], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    return dir;
  };

  it("streams each format with its file name, and the consumers compute the engine's logits (within 1e-4)", async () => {
    const peft = await download(1);
    expect(peft.statusCode).toBe(200);
    expect(peft.headers["content-type"]).toBe("application/gzip");
    expect(peft.headers["content-disposition"]).toBe('attachment; filename="exported-step1.tar.gz"');
    const peftDir = path.join(untar(peft.rawPayload, "peft"), "exported-step1");
    expect(fs.readdirSync(peftDir).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors"]);

    const merged = await download(1, "?format=merged");
    expect(merged.statusCode).toBe(200);
    expect(merged.headers["content-disposition"]).toBe('attachment; filename="exported-step1-merged.tar.gz"');
    const mergedDir = path.join(untar(merged.rawPayload, "merged"), "exported-step1-merged");
    expect(fs.readdirSync(mergedDir)).toEqual(expect.arrayContaining(["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]));

    const gguf = await download(1, "?format=gguf");
    expect(gguf.statusCode).toBe(200);
    expect(gguf.headers["content-disposition"]).toBe('attachment; filename="exported-step1.gguf"');
    expect(Number(gguf.headers["content-length"])).toBe(gguf.rawPayload.length);
    const ggufFile = path.join(work, "exported-step1.gguf");
    fs.writeFileSync(ggufFile, gguf.rawPayload);
    // The temporary export directories are gone once sent (the stream's close may follow the response by a moment).
    await vi.waitFor(() => expect(fs.readdirSync(path.join(t.dataDir, "exports"))).toEqual([]), { timeout: 5000 });

    // Flywheel's engine on the base weights with the downloaded adapter.
    const baseDir = tinyModel("qwen2").dir;
    const model = loadModel(baseDir, { kernels: new TsKernels() });
    const adapter = loadLoraAdapter(peftDir, model);
    const tokens = model.tokenizer.encode("Name a color. blue, like the sky");
    const engine = model.transformer.forward([{ cache: model.transformer.createCache(tokens.length), tokens, logits: "all", adapter }])[0]!;
    const base = model.transformer.logitsOf(tokens);

    const report = runTestPython<ConsumerReport>(python, consumers, { base: baseDir, peft: peftDir, merged: mergedDir, gguf: ggufFile, tokens });
    const vocab = model.config.vocabSize;
    const worst = (rows: number[][], reference: Float32Array) => Math.max(...rows.flatMap((row, p) => row.map((value, v) => Math.abs(value - reference[p * vocab + v]!))));
    expect(report.peft_logits).toHaveLength(tokens.length);
    expect(worst(report.peft_logits, engine)).toBeLessThan(1e-4);
    expect(worst(report.merged_logits, engine)).toBeLessThan(1e-4);
    // The adapter was trained: the exports are not the base model.
    expect(worst(report.merged_logits, base)).toBeGreaterThan(1e-3);

    expect(report.adapter_config).toMatchObject({ peft_type: "LORA", r: 8, lora_alpha: 16, base_model_name_or_path: TINY_BASE_MODEL });
    expect(report.gguf.architecture).toBe("qwen2");
    const linearDifferences = Object.values(report.gguf.linear_max_abs_difference);
    expect(linearDifferences).toHaveLength(7 * model.config.numLayers);
    expect(Math.max(...linearDifferences)).toBe(0);
  }, 300_000);

  it("answers bad requests with the documented errors", async () => {
    expect((await download(1, "", t.keys.bob)).statusCode).toBe(404);
    const missing = await download(7);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: "Model 'exported' has no checkpoint at step 7" });
    const format = await download(1, "?format=onnx");
    expect(format.statusCode).toBe(422);
    expect(format.json().detail[0].loc).toEqual(["query", "format"]);
    expect((await download(-1)).statusCode).toBe(422);
  });

  it("exports step 0 of a model that was never trained as the base weights, but has no adapter to give", async () => {
    const fresh = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "untrained", base_model: TINY_BASE_MODEL } });
    const url = `/v1/preview/models/${fresh.json().id}/checkpoints/0/download`;
    const peft = await t.request(t.keys.alice, { method: "GET", url });
    expect(peft.statusCode).toBe(404);
    expect(peft.json().detail).toContain("format=merged");
    const merged = await t.request(t.keys.alice, { method: "GET", url: `${url}?format=merged` });
    expect(merged.statusCode).toBe(200);
    const dir = path.join(untar(merged.rawPayload, "untrained"), "untrained-step0-merged");
    const model = loadModel(dir, { kernels: new TsKernels() });
    const base = loadModel(tinyModel("qwen2").dir, { kernels: new TsKernels() });
    const tokens = [1, 2, 3];
    expect(model.transformer.logitsOf(tokens)).toEqual(base.transformer.logitsOf(tokens));
  });
});

/** A model whose files GGUF cannot hold answers 409 with the reason, not a server error. */
describe("checkpoint download of a model llama.cpp cannot tokenize", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite", { servedModels: { "flywheel/tiny-chat": path.join(here, "..", "..", "..", "..", "models", "flywheel", "tiny-chat") } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("is a 409 that names the file and field", async () => {
    const model = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "chat", base_model: "flywheel/tiny-chat" } });
    const res = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${model.json().id}/checkpoints/0/download?format=gguf` });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toMatch(/^Step 0 of model 'chat' cannot be exported as gguf: tokenizer\.json: 'pre_tokenizer' is not one llama\.cpp implements/);
    expect(res.json().detail).not.toContain(t.dataDir);
    await vi.waitFor(() => expect(fs.readdirSync(path.join(t.dataDir, "exports"))).toEqual([]));
  });
});
