import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, type RunningServer, startServer } from "../testing/cli.js";
import { createLoraAdapter } from "../engine/lora/init.js";
import { saveLoraAdapter } from "../engine/lora/files.js";
import { randomizeAdapter } from "../testing/lora.js";
import { loadTinyModel, tinyModel } from "../testing/models.js";
import { makeTempDir } from "../testing/stores.js";

const key = "checkpoints-cli-key-0123456789";

/** `flywheel checkpoints download` and `import` against a real server process that trained a checkpoint. */
describe("flywheel checkpoints download and import", () => {
  const dataDir = makeTempDir();
  const outDir = makeTempDir();
  let server: RunningServer;
  let modelId: string;
  beforeAll(async () => {
    fs.cpSync(tinyModel("qwen2").dir, path.join(dataDir, "models", "tiny", "qwen2"), { recursive: true });
    server = await startServer(["--data-dir", dataDir], { FLYWHEEL_API_KEY: key, FLYWHEEL_LOG_LEVEL: "warn", FLYWHEEL_JOB_POLL_MS: "50" });
    const post = async (url: string, body: unknown) => {
      const response = await fetch(`${server.url}${url}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      return (await response.json()) as Record<string, string>;
    };
    modelId = (await post("/v1/preview/models", { project: "p", name: "cli", base_model: "tiny/qwen2" })).id!;
    const row = JSON.stringify({
      messages: [
        { role: "user", content: "Q" },
        { role: "assistant", content: "A" },
      ],
    });
    const artifact = await post("/v1/preview/artifacts", { project: "p", name: "d", files: [{ name: "train.jsonl", text: `${row}\n${row}\n` }] });
    const job = await post("/v1/preview/sft-training-jobs", { model_id: modelId, training_data_url: artifact.url });
    for (let status = ""; status !== "succeeded"; ) {
      const read = await fetch(`${server.url}/v1/preview/training-jobs/${job.id}`, { headers: { authorization: `Bearer ${key}` } });
      status = ((await read.json()) as { status: string }).status;
      if (status === "failed" || status === "cancelled") throw new Error(`the job ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 120_000);
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await server?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it("writes the adapter under the server's file name and a merged model to --out, printing the path last", async () => {
    const peftResult = await runCli(["checkpoints", "download", "--model-id", modelId, "--step", "1", "--base-url", server.url], { FLYWHEEL_API_KEY: key }, outDir);
    expect(peftResult.code, peftResult.stderr).toBe(0);
    const peftFile = peftResult.stdout.trim().split("\n").at(-1)!;
    expect(peftFile).toBe(path.join(outDir, "cli-step1.tar.gz"));
    expect(listTar(peftFile)).toEqual(["cli-step1/adapter_config.json", "cli-step1/adapter_model.safetensors"]);

    const out = path.join(outDir, "merged.tar.gz");
    const merged = await runCli(["checkpoints", "download", "--model-id", modelId, "--step", "1", "--format", "merged", "--out", out, "--base-url", server.url], { FLYWHEEL_API_KEY: key });
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout.trim().split("\n").at(-1)).toBe(out);
    expect(listTar(out)).toEqual(expect.arrayContaining(["cli-step1-merged/config.json", "cli-step1-merged/model.safetensors"]));
  });

  it("imports an adapter directory as a new model's step 0 and prints its name last", async () => {
    const adapterDir = path.join(outDir, "adapter");
    saveLoraAdapter(adapterDir, randomizeAdapter(createLoraAdapter(loadTinyModel("qwen2").config, { rank: 4, alpha: 8 }), 5));
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const created = await fetch(`${server.url}/v1/preview/models`, { method: "POST", headers, body: JSON.stringify({ project: "p", name: "imported", base_model: "tiny/qwen2" }) });
    const importedId = ((await created.json()) as { id: string }).id;
    const result = await runCli(["checkpoints", "import", "--model-id", importedId, adapterDir, "--base-url", server.url], { FLYWHEEL_API_KEY: key });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split("\n").at(-1)).toBe("wandb-artifact:///default/p/imported:step0");
    const chat = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "wandb-artifact:///default/p/imported:step0", messages: [{ role: "user", content: "Q" }], max_completion_tokens: 2 }),
    });
    expect(chat.status).toBe(200);
    const empty = await runCli(["checkpoints", "import", "--model-id", importedId, outDir, "--base-url", server.url], { FLYWHEEL_API_KEY: key });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/has no adapter_config.json/);
  });

  it("reports the server's error and leaves no partial file; exits 2 on a bad command line", async () => {
    const missing = await runCli(["checkpoints", "download", "--model-id", modelId, "--step", "5", "--out", path.join(outDir, "x"), "--base-url", server.url], { FLYWHEEL_API_KEY: key });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/HTTP 404.*no checkpoint at step 5/);
    expect(fs.existsSync(path.join(outDir, "x"))).toBe(false);
    const usage = await runCli(["checkpoints", "download", "--step", "1"], { FLYWHEEL_API_KEY: key });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--model-id/);
    const format = await runCli(["checkpoints", "download", "--model-id", modelId, "--step", "1", "--format", "onnx"], { FLYWHEEL_API_KEY: key });
    expect(format.code).toBe(2);
  });
});

function listTar(file: string): string[] {
  const run = spawnSync("tar", ["-tzf", file], { encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim().split("\n").sort();
}
