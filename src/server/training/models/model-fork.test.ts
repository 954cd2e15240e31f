import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { isTerminal, waitForJob } from "../../../testing/training.js";

const messages = [{ role: "user", content: "Name a color." }];

/** Issue 14 item 2: a model registered on a checkpoint name starts from those weights and trains on. */
describe.each(testDialects)("forking a checkpoint on %s", (dialect) => {
  let t: TestApp;
  let parentId: string;
  beforeAll(async () => {
    t = await startTrainingApp(dialect);
    parentId = (await register({ project: "p", name: "parent", base_model: TINY_BASE_MODEL })).json().id;
    await train(parentId, "blue, like the sky");
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const register = (payload: Record<string, unknown>, key = t.keys.alice) => t.request(key, { method: "POST", url: "/v1/preview/models", payload });
  let uploads = 0;
  const train = async (modelId: string, answer: string) => {
    const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: answer }] });
    const upload = await t.request(t.keys.alice, {
      method: "POST",
      url: "/v1/preview/artifacts",
      payload: { project: "p", name: `data-${uploads++}`, files: [{ name: "train.jsonl", text: `${Array(4).fill(row).join("\n")}\n` }] },
    });
    const job = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: upload.json().url, config: { learning_rate: 2e-2 } } });
    expect(await waitForJob(t, job.json().id, isTerminal, t.keys.alice, 60_000)).toMatchObject({ status: "succeeded" });
  };
  const logprobs = async (model: string) => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: { model, messages, temperature: 0, max_completion_tokens: 8, logprobs: true, return_tokens_as_token_ids: true } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().choices[0].logprobs.content.map((entry: { token: string; logprob: number }) => [entry.token, entry.logprob]);
  };

  it("starts from the checkpoint's weights exactly, shows its lineage, and trains on", async () => {
    const fork = await register({ project: "q", name: "child", base_model: "wandb-artifact:///alice/p/parent:step1" });
    expect(fork.statusCode, fork.body).toBe(200);
    const child = fork.json();
    expect(child).toMatchObject({ base_model: TINY_BASE_MODEL, forked_from: { model_id: parentId, name: "wandb-artifact:///alice/p/parent:step1", step: 1 } });
    const read = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${child.id}` });
    expect(read.json()).toEqual(child);

    const parentStep1 = await logprobs("wandb-artifact:///alice/p/parent:step1");
    expect(await logprobs("wandb-artifact:///alice/q/child:step0")).toEqual(parentStep1);
    expect(await logprobs("wandb-artifact:///alice/q/child")).toEqual(parentStep1);
    expect(await logprobs("wandb-artifact:///alice/p/parent:step0")).not.toEqual(parentStep1);

    await train(child.id, "green, like grass");
    const steps = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${child.id}/checkpoints` })).json().data.map((item: { step: number }) => item.step);
    expect(steps).toEqual([0, 1]);
    expect(await logprobs("wandb-artifact:///alice/q/child:step1")).not.toEqual(parentStep1);
    // The parent is untouched by its fork's training.
    expect(await logprobs("wandb-artifact:///alice/p/parent:step1")).toEqual(parentStep1);
  }, 120_000);

  it("forks the latest checkpoint when no step is named, and a never-trained model's step 0 as its base", async () => {
    const latest = await register({ project: "q", name: "from-latest", base_model: "wandb-artifact:///alice/p/parent" });
    expect(latest.json().forked_from).toMatchObject({ step: 1, name: "wandb-artifact:///alice/p/parent:step1" });
    const untrained = (await register({ project: "p", name: "untrained", base_model: TINY_BASE_MODEL })).json();
    const fromBase = await register({ project: "q", name: "from-base", base_model: "wandb-artifact:///alice/p/untrained:step0" });
    expect(fromBase.json().forked_from).toEqual({ model_id: untrained.id, name: "wandb-artifact:///alice/p/untrained:step0", step: 0 });
    expect(await logprobs("wandb-artifact:///alice/q/from-base")).toEqual(await logprobs(TINY_BASE_MODEL));
  });

  it("keeps a fork's weights when its parent is deleted", async () => {
    const doomedId = (await register({ project: "p", name: "doomed", base_model: TINY_BASE_MODEL })).json().id;
    await train(doomedId, "red, like a rose");
    const doomedStep1 = await logprobs("wandb-artifact:///alice/p/doomed:step1");
    expect((await register({ project: "q", name: "survivor", base_model: "wandb-artifact:///alice/p/doomed:step1" })).statusCode).toBe(200);
    expect((await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${doomedId}` })).statusCode).toBe(200);
    expect(await logprobs("wandb-artifact:///alice/q/survivor:step0")).toEqual(doomedStep1);
  }, 60_000);

  it("refuses what cannot be forked with a 422 on base_model", async () => {
    const cases: [Record<string, unknown>, string, string[]][] = [
      [{ base_model: "wandb-artifact:///alice/p/parent:step9" }, "has no checkpoint at step 9", ["body", "base_model"]],
      [{ base_model: "wandb-artifact:///alice/p/nobody:step1" }, "No trained model", ["body", "base_model"]],
      [{ base_model: "wandb-artifact:///bob/p/parent:step1" }, "No trained model", ["body", "base_model"]],
      [{ base_model: "wandb-artifact:///alice/p/parent:step1", lora_config: { r: 4 } }, "A fork keeps the LoRA configuration", ["body", "lora_config"]],
    ];
    for (const [payload, message, loc] of cases) {
      const res = await register({ project: "q", name: "refused", ...payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().detail[0].loc).toEqual(loc);
      expect(res.json().detail[0].msg).toContain(message);
    }
    // Bob cannot fork Alice's model even by naming her entity.
    const bob = await register({ project: "q", name: "stolen", base_model: "wandb-artifact:///alice/p/parent:step1" }, t.keys.bob);
    expect(bob.statusCode).toBe(422);
    expect((await t.request(t.keys.bob, { method: "GET", url: `/v1/preview/models/${parentId}` })).statusCode).toBe(404);
  });
});
