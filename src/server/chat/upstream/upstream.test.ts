import OpenAI from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { tinyModel } from "../../../testing/models.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { isTerminal, waitForJob } from "../../../testing/training.js";

const messages = [{ role: "user" as const, content: "Name a color." }];
const logprobsOf = (completion: ChatCompletion) => completion.choices[0]!.logprobs!.content!.map((entry) => [entry.token, entry.logprob] as const);

/** Same tokens, logprobs equal up to float noise (a prompt served from the prefix cache sums in another order). */
function expectSameLogprobs(actual: ChatCompletion, expected: ChatCompletion): void {
  const [a, b] = [logprobsOf(actual), logprobsOf(expected)];
  expect(a.map(([token]) => token)).toEqual(b.map(([token]) => token));
  a.forEach(([, logprob], index) => expect(logprob).toBeCloseTo(b[index]![1], 5));
}

/**
 * FLYWHEEL_UPSTREAMS end to end against a real OpenAI-compatible upstream: a second Flywheel
 * server with vLLM's runtime LoRA endpoints on, serving the same base model. The front server
 * trains; inference for the base model and its checkpoints goes upstream — the checkpoint as an
 * adapter the upstream loads from the front's data directory (shared storage: the same disk here).
 */
describe("chat completions forwarded to an upstream server", () => {
  let upstream: TestApp;
  let front: TestApp;
  let upstreamUrl: string;
  let client: OpenAI;
  let direct: OpenAI;
  beforeAll(async () => {
    upstream = await startTestApp("sqlite", { servedModels: { [TINY_BASE_MODEL]: tinyModel("qwen2").dir }, env: { FLYWHEEL_ALLOW_RUNTIME_LORA: "1" } });
    upstreamUrl = `${await upstream.app.listen({ port: 0, host: "127.0.0.1" })}/v1`;
    direct = new OpenAI({ baseURL: upstreamUrl, apiKey: upstream.keys.alice, maxRetries: 0 });
    const upstreams = { [TINY_BASE_MODEL]: { url: upstreamUrl, api_key: upstream.keys.alice } };
    front = await startTrainingApp("sqlite", { env: { FLYWHEEL_UPSTREAMS: JSON.stringify(upstreams) } });
    client = new OpenAI({ baseURL: `${await front.app.listen({ port: 0, host: "127.0.0.1" })}/v1`, apiKey: front.keys.alice, maxRetries: 0 });
  });
  afterAll(async () => {
    await front?.close();
    await upstream?.close();
  });

  const greedy = (api: OpenAI, model: string, extra: Record<string, unknown> = {}) => api.chat.completions.create({ model, messages, temperature: 0, max_completion_tokens: 6, logprobs: true, ...extra });

  it("answers a base-model request with the upstream's completion, streamed or not, and starts no engine of its own", async () => {
    const forwarded = await greedy(client, TINY_BASE_MODEL);
    const upstreamAnswer = await greedy(direct, TINY_BASE_MODEL);
    expect(forwarded.model).toBe(TINY_BASE_MODEL);
    expectSameLogprobs(forwarded, upstreamAnswer);

    const stream = await client.chat.completions.create({ model: TINY_BASE_MODEL, messages, temperature: 0, max_completion_tokens: 6, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: unknown;
    for await (const chunk of stream) {
      expect(chunk.model).toBe(TINY_BASE_MODEL);
      text += chunk.choices[0]?.delta.content ?? "";
      usage ??= chunk.usage;
    }
    expect(text).toBe(forwarded.choices[0]!.message.content);
    expect(usage).toMatchObject({ completion_tokens: forwarded.usage!.completion_tokens });
    expect(front.engines!.started()).toEqual([]);
  });

  it("serves a trained checkpoint as a LoRA adapter the upstream loads, and loads it again after the upstream forgot it", async () => {
    const model = await client.post<{ id: string; entity: string }>("/preview/models", { body: { project: "p", name: "forwarded", base_model: TINY_BASE_MODEL } });
    const name = `wandb-artifact:///${model.entity}/p/forwarded`;
    // Before any checkpoint the name serves the upstream's base model, with token-id logprobs by default.
    const before = await client.chat.completions.create({ model: name, messages, temperature: 0, max_completion_tokens: 6 });
    expect(before.model).toBe(name);
    expect(before.choices[0]!.logprobs!.content![0]!.token).toMatch(/^token_id:\d+$/);

    const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: "blue, like the sky" }] });
    const data = await client.post<{ url: string }>("/preview/artifacts", { body: { project: "p", name: "colors", files: [{ name: "train.jsonl", text: `${Array(4).fill(row).join("\n")}\n` }] } });
    const job = await client.post<{ id: string }>("/preview/sft-training-jobs", { body: { model_id: model.id, training_data_url: data.url, config: { learning_rate: 2e-2 } } });
    expect((await waitForJob(front, job.id, isTerminal)).status).toBe("succeeded");

    const trained = await greedy(client, name);
    expect(trained.model).toBe(name);
    expect(logprobsOf(trained)).not.toEqual(logprobsOf(before));
    // The upstream now lists the checkpoint as an adapter of its base model, and serves it directly alike.
    const checkpoint = (await client.get<{ data: { id: string }[] }>(`/preview/models/${model.id}/checkpoints`, { query: { order: "desc", limit: 1 } })).data[0]!;
    const adapterName = `flywheel-${checkpoint.id}`;
    const listed = (await direct.models.list()).data.find((entry) => entry.id === adapterName) as unknown as { parent: string } | undefined;
    expect(listed?.parent).toBe(TINY_BASE_MODEL);
    expectSameLogprobs(await greedy(direct, adapterName, { return_tokens_as_token_ids: true }), trained);
    expectSameLogprobs(await greedy(client, `${name}:step1`), trained);

    // An upstream restart forgets runtime adapters; the front loads it again on the next request.
    await direct.post("/unload_lora_adapter", { body: { lora_name: adapterName }, headers: { accept: "text/plain" } });
    expect((await direct.models.list()).data.map((entry) => entry.id)).not.toContain(adapterName);
    expectSameLogprobs(await greedy(client, name), trained);
    expect((await direct.models.list()).data.map((entry) => entry.id)).toContain(adapterName);
    expect(front.engines!.started()).toEqual([]);
  });

  it("passes the upstream's refusal of a request on with its status and message", async () => {
    const refused = await greedy(client, TINY_BASE_MODEL, { logprobs: false, top_logprobs: 2 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("when using `top_logprobs`, `logprobs` must be set to true.");
  });

  it("refuses the surfaces it does not forward (501, naming the upstream) and starts no engine for them", async () => {
    const legacy = await client.completions.create({ model: TINY_BASE_MODEL, prompt: "x", max_tokens: 2 }).catch((error: unknown) => error);
    expect(legacy).toMatchObject({ status: 501, message: expect.stringContaining("served by an upstream server") });
    const responses = await client.responses.create({ model: TINY_BASE_MODEL, input: "x" }).catch((error: unknown) => error);
    expect(responses).toMatchObject({ status: 501 });
    expect(front.engines!.started()).toEqual([]);
  });
});

describe("an upstream that cannot serve", () => {
  it("is a 502 naming the upstream when it cannot be reached or cannot read the adapter", async () => {
    const upstream = await startTestApp("sqlite", { servedModels: { [TINY_BASE_MODEL]: tinyModel("qwen2").dir }, env: { FLYWHEEL_ALLOW_RUNTIME_LORA: "1" } });
    const upstreamUrl = `${await upstream.app.listen({ port: 0, host: "127.0.0.1" })}/v1`;
    const upstreams = {
      [TINY_BASE_MODEL]: { url: upstreamUrl, api_key: upstream.keys.alice, upstream_adapter_dir: "/nowhere/adapters" },
      "gone/model": { url: "http://127.0.0.1:9/v1" },
    };
    const front = await startTrainingApp("sqlite", { env: { FLYWHEEL_UPSTREAMS: JSON.stringify(upstreams) } });
    try {
      const ask = (model: string) => front.request(front.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: { model, messages, max_completion_tokens: 2 } });
      const unreachable = await ask("gone/model");
      expect(unreachable.statusCode).toBe(502);
      expect(unreachable.json().error).toMatchObject({ type: "BadGatewayError", code: 502 });
      expect(unreachable.json().error.message).toContain("The upstream inference server for `gone/model` at http://127.0.0.1:9/v1 cannot be reached");

      const models = (await front.request(front.keys.alice, { method: "GET", url: "/v1/models" })).json().data as { id: string; owned_by: string }[];
      expect(models.find((entry) => entry.id === "gone/model")).toMatchObject({ owned_by: "upstream" });

      const created = await front.request(front.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "m", base_model: TINY_BASE_MODEL } });
      const modelId = created.json().id as string;
      const row = JSON.stringify({ messages: [...messages, { role: "assistant", content: "red" }] });
      const data = await front.request(front.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "d", files: [{ name: "train.jsonl", text: `${row}\n${row}\n` }] } });
      const job = await front.request(front.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: data.json().url } });
      expect((await waitForJob(front, job.json().id, isTerminal)).status).toBe("succeeded");
      const unreadable = await ask("wandb-artifact:///alice/p/m");
      expect(unreadable.statusCode).toBe(502);
      expect(unreadable.json().error.message).toMatch(/could not load the checkpoint adapter from \/nowhere\/adapters\/[0-9a-f-]+ \(HTTP 404: No adapter found/);
    } finally {
      await front.close();
      await upstream.close();
    }
  });
});
