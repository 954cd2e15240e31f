import type { TestApp } from "./app.js";

/** Builders and waits shared by the training-job tests. */

/** A sampled choice as ART dumps it, with token-id logprobs. */
export function sampledChoice(content: string, tokenIds: number[] = [101, 102]): Record<string, unknown> {
  return {
    finish_reason: "stop",
    index: 0,
    logprobs: { content: tokenIds.map((id) => ({ token: `token_id:${id}`, bytes: [104], logprob: -0.5, top_logprobs: [] })), refusal: null },
    message: { content, refusal: null, role: "assistant", annotations: null, audio: null, function_call: null, tool_calls: null },
    stop_reason: null,
  };
}

export function trajectory(reward: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messages_and_choices: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hi" }, sampledChoice("hi")],
    tools: null,
    additional_histories: [],
    reward,
    metrics: {},
    metadata: {},
    logs: [],
    ...extra,
  };
}

/** Groups whose rewards are all equal within each group: nothing to train, the step advances. */
export function flatGroups(count = 2): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) => ({ trajectories: [trajectory(index), trajectory(index)], exceptions: [] }));
}

/** A group whose rewards differ: something to train on. */
export function varyingGroups(): Record<string, unknown>[] {
  return [{ trajectories: [trajectory(0), trajectory(1)], exceptions: [] }];
}

export async function registerModel(t: TestApp, name: string, key = t.keys.alice, baseModel = "test/base"): Promise<string> {
  const res = await t.request(key, { method: "POST", url: "/v1/preview/models", payload: { project: "proj", name, base_model: baseModel, return_existing: true } });
  if (res.statusCode !== 200) throw new Error(`register failed: ${res.body}`);
  return res.json().id as string;
}

export async function createRlJob(t: TestApp, modelId: string, groups = flatGroups(), key = t.keys.alice, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.request(key, { method: "POST", url: "/v1/preview/training-jobs", payload: { model_id: modelId, trajectory_groups: groups, ...extra } });
  if (res.statusCode !== 200) throw new Error(`job create failed: ${res.body}`);
  return res.json().id as string;
}

/** Polls GET /training-jobs/{id} until `done(job)` holds. */
export async function waitForJob(t: TestApp, jobId: string, done: (job: { status: string; [key: string]: unknown }) => boolean, key = t.keys.alice, timeoutMs = 20_000): Promise<Record<string, unknown> & { status: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await t.request(key, { method: "GET", url: `/v1/preview/training-jobs/${jobId}` })).json();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not reach the expected state: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const isTerminal = (job: { status: string }) => ["succeeded", "failed", "cancelled"].includes(job.status);

/** Every event of a job, following the pages (a fast job may have hundreds). */
export async function allEvents(t: TestApp, jobId: string, key = t.keys.alice): Promise<{ id: string; type: string; data: Record<string, unknown> }[]> {
  const events: { id: string; type: string; data: Record<string, unknown> }[] = [];
  for (let after = ""; ; ) {
    const page = (await t.request(key, { method: "GET", url: `/v1/preview/training-jobs/${jobId}/events?limit=100${after && `&after=${after}`}` })).json();
    events.push(...page.data);
    if (!page.has_more) return events;
    after = page.last_id;
  }
}

/**
 * A large RL job's groups: `trajectories` conversations (four per group, rewards 0–3) of `turns`
 * user/assistant exchanges each, every assistant turn a sampled choice. Planning 400 of 8 turns
 * takes seconds of tokenizing and packing.
 */
export function longConversationGroups(trajectories: number, turns: number): Record<string, unknown>[] {
  const conversation = (index: number, reward: number) =>
    trajectory(reward, {
      messages_and_choices: [
        { role: "system", content: "Be brief." },
        ...Array.from({ length: turns }, (_, turn) => [{ role: "user", content: `question ${index}.${turn} about rivers, stones and the light on them` }, sampledChoice(`answer ${turn}, quiet`, [101, 102, 103, 104])]).flat(),
      ],
    });
  return Array.from({ length: Math.ceil(trajectories / 4) }, (_, group) => ({ trajectories: [0, 1, 2, 3].map((reward) => conversation(group * 4 + reward, reward)), exceptions: [] }));
}
