import OpenAI from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoraAdapter } from "../../engine/lora/adapter.js";
import { loadLoraAdapter } from "../../engine/lora/files.js";
import { createLoraAdapter } from "../../engine/lora/init.js";
import { modelTemplateDeps } from "../../engine/train/job/template-deps.js";
import { LoraTrainer } from "../../engine/train/lora-trainer.js";
import { packTokenizedResults } from "../../engine/train/packing.js";
import { rlLossInputs } from "../../engine/train/loss-inputs.js";
import { tokenizeTrajectoryGroups } from "../../engine/train/tokenize-groups.js";
import type { ChoiceJson } from "../../engine/train/trajectory.js";
import type { TestApp } from "../../testing/app.js";
import { loadTinyModel } from "../../testing/models.js";
import { testDialects } from "../../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../testing/trainer-app.js";
import { allEvents, isTerminal, waitForJob } from "../../testing/training.js";

const model = loadTinyModel("qwen2");
const messages = [{ role: "user" as const, content: "Name a color." }];

/**
 * Issue 5 items 6–7: a trained checkpoint is served by the chat endpoint by every name form as
 * soon as training_ended can be read, and the trainer recomputes the logprobs the endpoint
 * returned for temperature-1 samples to within 1e-5.
 */
describe.each(testDialects)("trained checkpoints through /v1/chat/completions on %s", (dialect) => {
  let t: TestApp;
  let client: OpenAI;
  let modelId: string;
  beforeAll(async () => {
    t = await startTrainingApp(dialect);
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    client = new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
    modelId = (await client.post<{ id: string }>("/preview/models", { body: { project: "p", name: "served", base_model: TINY_BASE_MODEL, return_existing: true } })).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const sftJob = async (lines: number, learningRate: number) => {
    const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: "blue, like the sky" }] });
    const upload = await client.post<{ url: string }>("/preview/artifacts", { body: { project: "p", name: `data-${lines}`, files: [{ name: "train.jsonl", text: `${Array(lines).fill(row).join("\n")}\n` }] } });
    return (await client.post<{ id: string }>("/preview/sft-training-jobs", { body: { model_id: modelId, training_data_url: upload.url, config: { learning_rate: learningRate } } })).id;
  };
  const greedy = (name: string) => client.chat.completions.create({ model: name, messages, temperature: 0, max_completion_tokens: 6, logprobs: true, seed: 1 });
  const logprobsOf = (completion: ChatCompletion) => completion.choices[0]!.logprobs!.content!.map((entry) => [entry.token, entry.logprob]);
  const adapterAt = async (step: number): Promise<LoraAdapter> => {
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", step).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    const blobs = t.app.services.blobs;
    return loadLoraAdapter({ configFile: blobs.localPath(files["adapter_config.json"]!), weightsFile: blobs.localPath(files["adapter_model.safetensors"]!) }, model);
  };

  it("serves the new step by every name form as soon as training_ended is listed, and refuses to delete what a running job needs", async () => {
    const base = await greedy(TINY_BASE_MODEL);
    const before = await greedy("wandb-artifact:///alice/p/served");
    expect(logprobsOf(before).map(([, logprob]) => logprob)).toEqual(base.choices[0]!.logprobs!.content!.map((entry) => entry.logprob));

    const jobId = await sftJob(4, 2e-2);
    // Poll as ART does: the first read that shows training_ended is followed at once by requests for the new step.
    for (let i = 0; !(await allEvents(t, jobId)).some((event) => event.type === "training_ended"); i++) {
      if (i > 2000) throw new Error("the job did not end");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const names = ["wandb-artifact:///alice/p/served", "wandb-artifact:///alice/p/served:latest", "wandb-artifact:///alice/p/served:step1", "wandb-artifact://alice/p/served:step1", "artifact:///alice/p/served:step1", "served@1"];
    const served = await Promise.all(names.map(greedy));
    for (const [i, completion] of served.entries()) {
      expect(completion.model, names[i]).toBe(names[i]);
      expect(logprobsOf(completion), names[i]).toEqual(logprobsOf(served[0]!));
    }
    expect(logprobsOf(served[0]!)).not.toEqual(logprobsOf(before));
    expect(logprobsOf(await greedy("served@0"))).toEqual(logprobsOf(before));

    // A running job trains from step 1: deleting it is refused until the job ends.
    const long = await sftJob(400, 1e-4);
    await waitForJob(t, long, (job) => job.status === "running");
    const refused = await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${modelId}/checkpoints`, payload: { steps: [1] } });
    expect(refused.statusCode).toBe(409);
    expect(refused.headers["x-should-retry"]).toBe("false");
    await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/training-jobs/${long}/cancel` });
    expect(await waitForJob(t, long, isTerminal)).toMatchObject({ status: "cancelled" });
  });

  it("recomputes the logprobs of temperature-1 samples exactly as the endpoint returned them (within 1e-5)", async () => {
    const scorer = new LoraTrainer(model.transformer, createLoraAdapter(model.config));
    const deps = modelTemplateDeps(model);
    let worst = 0;
    let compared = 0;
    for (const [name, adapter] of [
      [TINY_BASE_MODEL, null],
      ["wandb-artifact:///alice/p/served:step1", await adapterAt(1)],
    ] as const) {
      const completion = await client.chat.completions.create({ model: name, messages, temperature: 1, max_completion_tokens: 12, n: 4, seed: 11, logprobs: true, ...{ return_tokens_as_token_ids: true } });
      const choices = completion.choices as unknown as ChoiceJson[];
      // The trainer's own path: tokenize the Choices from their token ids, pack, score with the checkpoint's adapter.
      const group = { trajectories: choices.map((choice, i) => ({ reward: i, messages_and_choices: [...messages, choice] })) };
      const { results } = tokenizeTrajectoryGroups([group], deps, { scaleRewards: true, allowTrainingWithoutLogprobs: false });
      for (const row of packTokenizedResults(results, 2048, { padTokenId: 0 }).rows) {
        const trained = scorer.logprobs(row, { adapter });
        const { mask, oldLogprobs } = rlLossInputs(row);
        mask.forEach((bit, p) => {
          if (!bit) return;
          worst = Math.max(worst, Math.abs(trained[p]! - oldLogprobs[p]!));
          compared++;
        });
      }
    }
    expect(compared).toBeGreaterThan(40);
    expect(worst).toBeLessThan(1e-5);
  });
});
