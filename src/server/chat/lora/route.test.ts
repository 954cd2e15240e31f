import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readModelConfig } from "../../../engine/checkpoint/model-config.js";
import { createLoraAdapter, saveLoraAdapter } from "../../../engine/lora/index.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { randomizeAdapter } from "../../../testing/lora.js";
import { tinyModel } from "../../../testing/models.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";

const MODEL = "test/tiny";

/**
 * vLLM's runtime LoRA endpoints (`/v1/load_lora_adapter`, `/v1/unload_lora_adapter`): off by
 * default; when on, an adapter directory becomes a model name of the loading key's entity, with
 * vLLM's success texts and errors.
 */
describe.each(testDialects)("runtime LoRA adapters on %s", (dialect) => {
  let t: TestApp;
  let adapterDir: string;
  beforeAll(async () => {
    t = await startTestApp(dialect, { servedModels: { [MODEL]: tinyModel("qwen2").dir }, env: { FLYWHEEL_ALLOW_RUNTIME_LORA: "1" } });
    adapterDir = path.join(makeTempDir(), "adapter");
    const adapter = randomizeAdapter(createLoraAdapter(readModelConfig(tinyModel("qwen2").dir), { seed: 3, baseModelNameOrPath: MODEL }), 3, 2);
    saveLoraAdapter(adapterDir, adapter);
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(path.dirname(adapterDir), { recursive: true, force: true });
  });

  const post = (key: string, url: string, payload: Record<string, unknown>) => t.request(key, { method: "POST", url, payload });
  const greedy = (key: string, model: string) => post(key, "/v1/chat/completions", { model, messages: [{ role: "user", content: "Hi" }], temperature: 0, max_completion_tokens: 4, logprobs: true });

  it("loads an adapter under a name that chat completions then serve, for the loading entity only", async () => {
    const loaded = await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "my-lora", lora_path: adapterDir });
    expect(loaded.statusCode).toBe(200);
    expect(loaded.headers["content-type"]).toMatch(/^text\/plain/);
    expect(loaded.body).toBe("Success: LoRA adapter 'my-lora' added successfully.");

    const withAdapter = await greedy(t.keys.alice, "my-lora");
    expect(withAdapter.statusCode).toBe(200);
    expect(withAdapter.json().model).toBe("my-lora");
    const base = await greedy(t.keys.alice, MODEL);
    expect(withAdapter.json().choices[0].logprobs).not.toEqual(base.json().choices[0].logprobs);
    const listed = (await t.request(t.keys.alice, { method: "GET", url: "/v1/models" })).json().data;
    expect(listed).toContainEqual(expect.objectContaining({ id: "my-lora", parent: MODEL, root: adapterDir }));

    expect((await greedy(t.keys.bob, "my-lora")).json().error.message).toBe("The model `my-lora` does not exist.");
    expect((await t.request(t.keys.bob, { method: "GET", url: "/v1/models" })).json().data.map((model: { id: string }) => model.id)).not.toContain("my-lora");
  });

  it("answers vLLM's errors: a name loaded twice, a path without an adapter, an unknown name to unload", async () => {
    await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "twice", lora_path: adapterDir });
    const again = await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "twice", lora_path: adapterDir });
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toMatchObject({ message: "The lora adapter 'twice' has already been loaded.", type: "InvalidUserInput", code: 400 });
    expect((await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "twice", lora_path: adapterDir, load_inplace: true })).statusCode).toBe(200);

    const missing = await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "missing", lora_path: "/no/such/adapter" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.message).toMatch(/^No adapter found for \/no\/such\/adapter/);
    const shadowing = await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: MODEL, lora_path: adapterDir });
    expect(shadowing.statusCode).toBe(400);

    const unloaded = await post(t.keys.alice, "/v1/unload_lora_adapter", { lora_name: "twice" });
    expect(unloaded.body).toBe("Success: LoRA adapter 'twice' removed successfully.");
    const unknown = await post(t.keys.alice, "/v1/unload_lora_adapter", { lora_name: "twice" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe("The lora adapter 'twice' cannot be found.");
    expect((await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "" })).statusCode).toBe(422);
  });

  it("refuses an adapter whose tensors do not fit the base model", async () => {
    const broken = path.join(path.dirname(adapterDir), "broken");
    fs.cpSync(adapterDir, broken, { recursive: true });
    fs.writeFileSync(path.join(broken, "adapter_model.safetensors"), Buffer.from("not safetensors"));
    const res = await post(t.keys.alice, "/v1/load_lora_adapter", { lora_name: "broken", lora_path: broken });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/^The adapter at .*broken cannot be loaded: /);
  });
});

describe("runtime LoRA loading switched off", () => {
  it("is a 404 that says how to switch it on", async () => {
    const t = await startTestApp("sqlite");
    try {
      const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/load_lora_adapter", payload: { lora_name: "x", lora_path: "/tmp" } });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toContain("FLYWHEEL_ALLOW_RUNTIME_LORA=1");
    } finally {
      await t.close();
    }
  });
});
