import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adapterFiles } from "../../../engine/lora/files.js";
import { createLoraAdapter } from "../../../engine/lora/init.js";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import type { TestApp } from "../../../testing/app.js";
import { loadTinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { allEvents, isTerminal, waitForJob } from "../../../testing/training.js";

const model = loadTinyModel("qwen2");
const messages = [{ role: "user" as const, content: "Name a color." }];

/**
 * Issue 12 item 2: a checkpoint whose weights are somehow non-finite (written before the trainer
 * checked, or damaged on disk) answers chat with a clear 409, never a 500, and a job that trains
 * from it fails with training_failed naming the step, committing nothing.
 */
describe.each(testDialects)("a model whose weights are not finite, on %s", (dialect) => {
  let t: TestApp;
  let client: OpenAI;
  let modelId: string;
  beforeAll(async () => {
    t = await startTrainingApp(dialect);
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    client = new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
    modelId = (await client.post<{ id: string }>("/preview/models", { body: { project: "p", name: "poisoned", base_model: TINY_BASE_MODEL } })).id;
    const adapter = createLoraAdapter(model.config, { seed: 1, baseModelNameOrPath: TINY_BASE_MODEL });
    for (const factors of adapter.parameters()) factors.fill(Number.NaN);
    const files: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(adapterFiles(adapter))) files[name] = await t.app.services.blobs.put(bytes);
    await insertCheckpoint(t.store.db, { modelId, step: 1, files });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([false, true])("answers chat (stream %s) with a 409 that says why, while the base model still serves", async (stream) => {
    const res = await t.request(t.keys.alice, {
      method: "POST",
      url: "/v1/chat/completions",
      payload: { model: "wandb-artifact:///alice/p/poisoned", messages, max_tokens: 4, stream },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error).toMatchObject({ type: "ConflictError", code: 409, message: expect.stringMatching(/weights are not finite/) });
    const base = await client.chat.completions.create({ model: TINY_BASE_MODEL, messages, max_tokens: 4 });
    expect(base.choices[0]!.message.content).toEqual(expect.any(String));
  });

  it("fails a job that trains from it with training_failed naming the step, and commits nothing", async () => {
    const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: "blue" }] });
    const upload = await client.post<{ url: string }>("/preview/artifacts", { body: { project: "p", name: "data", files: [{ name: "train.jsonl", text: `${row}\n${row}\n` }] } });
    const job = await client.post<{ id: string }>("/preview/sft-training-jobs", { body: { model_id: modelId, training_data_url: upload.url, config: { learning_rate: 1e-3 } } });
    expect((await waitForJob(t, job.id, isTerminal)).status).toBe("failed");
    const events = await allEvents(t, job.id);
    expect(events.map((event) => event.type)).toEqual(["training_started", "training_failed"]);
    expect(events[1]!.data.error_message).toMatch(/^gradient step 1: the loss is not finite \(NaN\).*no checkpoint was committed/);
    const steps = await t.store.db.selectFrom("checkpoints").select("step").where("model_id", "=", modelId).orderBy("step").execute();
    expect(steps.map((checkpoint) => checkpoint.step)).toEqual([1]);
  });
});
