import OpenAI from "openai";
import { CursorPage } from "openai/core/pagination";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../testing/app.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../testing/trainer-app.js";

interface JobEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * ART's captures of the other inference APIs train like chat ones: rollouts are made through
 * POST /v1/completions, /v1/responses and /v1/messages on a trained model's name (whose results
 * then carry the exact token ids and logprobs), captured as `exchanges.completions`,
 * `.responses` and `.messages`, posted as a training job each, and each job changes the model.
 */
describe("training jobs on completions, responses and messages exchanges", () => {
  let t: TestApp;
  let client: OpenAI;
  let base: string;
  beforeAll(async () => {
    t = await startTrainingApp("sqlite");
    base = `${await t.app.listen({ port: 0, host: "127.0.0.1" })}/v1`;
    client = new OpenAI({ baseURL: base, apiKey: t.keys.alice, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${t.keys.alice}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  const capture: Record<string, (model: string, seed: number) => Promise<Record<string, unknown>>> = {
    completions: async (model, seed) => {
      const request = { model, prompt: "Say a word:", max_tokens: 3, temperature: 1, seed, return_token_ids: true };
      return { request, response: await post("/completions", request) };
    },
    responses: async (model, seed) => {
      const request = { model, instructions: "Be brief.", input: [{ role: "user", content: "Say a word." }], max_output_tokens: 3, temperature: 1, seed };
      return { request, response: await post("/responses", request) };
    },
    messages: async (model, seed) => {
      const request = { model, system: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: "Say a word." }] }], max_tokens: 3, temperature: 1, seed };
      return { request, response: await post("/messages", request) };
    },
  };

  async function firstTokenLogprobs(model: string): Promise<number[]> {
    const completion = await client.completions.create({ model, prompt: "Say a word:", max_tokens: 1, temperature: 0, logprobs: 5 });
    return Object.values(completion.choices[0]!.logprobs!.top_logprobs![0]!).sort();
  }

  async function runJob(modelId: string, trajectories: Record<string, unknown>[]): Promise<JobEvent[]> {
    const job = await client.post<{ id: string }>("/preview/training-jobs", { body: { model_id: modelId, trajectory_groups: [{ trajectories }], experimental_config: { learning_rate: 5e-2 } } });
    const events: JobEvent[] = [];
    for (let attempt = 0; attempt < 600 && !events.some((event) => event.type === "training_ended" || event.type === "training_failed"); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      events.length = 0;
      for await (const event of client.getAPIList<JobEvent, CursorPage<JobEvent>>(`/preview/training-jobs/${job.id}/events`, CursorPage<JobEvent>)) events.push(event);
    }
    return events;
  }

  it.each(["completions", "responses", "messages"])("a job on %s exchanges trains token-exact and changes the model", async (kind) => {
    const model = await client.post<{ id: string; entity: string }>("/preview/models", { body: { project: "surfaces", name: `on-${kind}`, base_model: TINY_BASE_MODEL } });
    const name = `wandb-artifact:///${model.entity}/surfaces/on-${kind}`;
    const before = await firstTokenLogprobs(name);
    const trajectories = await Promise.all(
      [0, 1, 2, 3].map(async (index) => {
        const exchange = await capture[kind]!(name, 100 + index);
        // The captures carry the exact ids: prompt and sampled ids, and a logprob per sampled token.
        const response = exchange.response as { prompt_token_ids?: number[]; token_ids?: number[]; logprobs?: number[]; choices?: { prompt_token_ids: number[]; token_ids: number[] }[] };
        const ids = kind === "completions" ? response.choices![0]! : response;
        expect(ids.prompt_token_ids!.length).toBeGreaterThan(0);
        expect(ids.token_ids!.length).toBeGreaterThan(0);
        return { exchanges: { [kind]: [exchange] }, ...(index < 2 ? { reward: 1 } : {}) };
      }),
    );
    const events = await runJob(model.id, trajectories);
    expect(events.find((event) => event.type === "training_failed")?.data.error_message).toBeUndefined();
    expect(events.filter((event) => event.type === "gradient_step").length).toBeGreaterThan(0);
    const after = await firstTokenLogprobs(`${name}:step1`);
    expect(after).not.toEqual(before);
  });
});
