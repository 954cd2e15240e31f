import OpenAI from "openai";
import { CursorPage } from "openai/core/pagination";
import type { ChatCompletion, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../testing/app.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../testing/trainer-app.js";

interface JobEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * ART's newest trajectory form end to end: a two-turn agent's calls are captured as
 * `exchanges.chat_completions` (request + response, ART's dump with exclude_defaults: no reward
 * when 0, no empty lists), posted as a training job, and the job changes the model.
 */
describe("a training job on exchanges trajectories", () => {
  let t: TestApp;
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTrainingApp("sqlite");
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    client = new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  const timestamp = (offset: number) => new Date(Date.UTC(2026, 0, 1) + offset).toISOString();

  /** One call as ART captures it: the request body, the response, and its times. */
  async function call(model: string, messages: ChatCompletionMessageParam[], seed: number, exactIds: boolean) {
    const request = { model, messages, max_completion_tokens: 3, temperature: 1, seed, logprobs: true, ...(exactIds ? { return_token_ids: true } : {}) };
    const response = (await client.chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming)) as ChatCompletion;
    return { exchange: { request, response, start_time: timestamp(seed), end_time: timestamp(seed + 1), model }, reply: response.choices[0]!.message.content ?? "" };
  }

  /** A two-turn agent rollout: the second call's request carries the first reply. */
  async function agentRollout(model: string, seed: number) {
    const opening: ChatCompletionMessageParam[] = [{ role: "user", content: "Say a word." }];
    const first = await call(model, opening, seed, true);
    const second = await call(model, [...opening, { role: "assistant", content: first.reply }, { role: "user", content: "Another." }], seed + 1, seed % 2 === 0);
    return { exchanges: { chat_completions: [first.exchange, second.exchange] } };
  }

  async function firstTokenLogprobs(model: string): Promise<number[]> {
    const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Say a word." }], max_completion_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 5 });
    return completion.choices[0]!.logprobs!.content![0]!.top_logprobs.map((entry) => entry.logprob);
  }

  it("trains every exchange of every trajectory and changes the model", async () => {
    const model = await client.post<{ id: string; entity: string }>("/preview/models", { body: { project: "agents", name: "two-turn", base_model: TINY_BASE_MODEL } });
    const inferenceName = `wandb-artifact:///${model.entity}/agents/two-turn`;
    const before = await firstTokenLogprobs(inferenceName);

    const trajectories = await Promise.all([0, 2, 4, 6].map((seed) => agentRollout(inferenceName, seed)));
    // Rewards 1, 1, 0, 0; ART leaves reward 0 out of its dump.
    const withRewards = trajectories.map((trajectory, index) => (index < 2 ? { ...trajectory, reward: 1, metadata: { scenario: { id: index, tags: ["a"] } } } : trajectory));
    const job = await client.post<{ id: string }>("/preview/training-jobs", {
      body: { model_id: model.id, trajectory_groups: [{ trajectories: withRewards }], experimental_config: { learning_rate: 5e-2 } },
    });

    const events: JobEvent[] = [];
    for (let attempt = 0; attempt < 600 && !events.some((event) => event.type === "training_ended" || event.type === "training_failed"); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      events.length = 0;
      for await (const event of client.getAPIList<JobEvent, CursorPage<JobEvent>>(`/preview/training-jobs/${job.id}/events`, CursorPage<JobEvent>)) events.push(event);
    }
    const failed = events.find((event) => event.type === "training_failed");
    expect(failed?.data.error_message).toBeUndefined();
    expect(events.map((event) => event.type)).toContain("training_ended");
    expect(events.filter((event) => event.type === "gradient_step").length).toBeGreaterThan(0);

    const checkpoints = await client.get<{ data: { step: number }[] }>(`/preview/models/${model.id}/checkpoints`);
    expect(checkpoints.data.map((checkpoint) => checkpoint.step)).toContain(1);
    const after = await firstTokenLogprobs(`${inferenceName}:step1`);
    expect(after).not.toEqual(before);
  });

  it("answers 422 naming a trajectory with both forms, and malformed exchanges of the other kinds", async () => {
    const model = await client.post<{ id: string }>("/preview/models", { body: { project: "agents", name: "invalid", base_model: TINY_BASE_MODEL } });
    const captured = (await agentRollout(TINY_BASE_MODEL, 10)).exchanges.chat_completions[0]!;
    const job = (trajectories: Record<string, unknown>[]) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/training-jobs", payload: { model_id: model.id, trajectory_groups: [{ trajectories }] } });
    const both = await job([{ exchanges: { chat_completions: [captured] }, messages_and_choices: [{ role: "user", content: "hi" }], reward: 1 }]);
    expect(both.statusCode).toBe(422);
    expect(both.json().detail).toEqual([{ loc: ["body", "trajectory_groups", 0, "trajectories", 0], msg: expect.stringMatching(/both exchanges and messages_and_choices/), type: expect.any(String) }]);
    for (const [kind, exchange, message] of [
      ["completions", { request: {}, response: {} }, /exactly one choice/],
      ["completions", { request: { prompt: "x" }, response: { choices: [{ text: "a" }] } }, /send the prompt as token ids, or ask for return_token_ids/],
      ["responses", {}, /needs a request and a response object/],
      ["messages", { request: [] }, /needs a request and a response object/],
    ] as const) {
      const bad = await job([{ exchanges: { [kind]: [exchange] }, reward: 1 }, { exchanges: { chat_completions: [captured] } }]);
      expect(bad.statusCode).toBe(422);
      const detail = bad.json().detail as { loc: (string | number)[]; msg: string }[];
      expect(detail[0]!.loc.join(".")).toMatch(new RegExp(`^body\\.trajectory_groups\\.0\\.trajectories\\.0\\.exchanges\\.${kind}\\.0`));
      expect(detail[0]!.msg).toMatch(message);
    }
  });
});
