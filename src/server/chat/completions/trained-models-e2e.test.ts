import fs from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { readModelConfig } from "../../../engine/checkpoint/model-config.js";
import { adapterFiles, createLoraAdapter, type LoraAdapter, saveLoraAdapter } from "../../../engine/lora/index.js";
import { defaultSamplingParams } from "../../../engine/sampling/params.js";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { type ChatParams, type ChatServer, type Chunk, chunksOf, readSse, startChatServer } from "../../../testing/chat-server.js";
import { choiceIds } from "../../../testing/engine.js";
import { randomizeAdapter } from "../../../testing/lora.js";
import { tinyModel } from "../../../testing/models.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";

/**
 * Trained-model names end to end (`docs/api/chat.md#model-names`, `docs/api/training.md#trained-model-logprobs`):
 * models registered through the preview API, checkpoints whose files are real PEFT adapters in the blob store
 * (committed as the job runner commits them: blobs first, then the checkpoint row), served under every name
 * form. Each answer is compared with the engine run directly on that adapter.
 */
describe.each(testDialects)("trained-model names end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  const adapterDirs = makeTempDir("flywheel-adapters-");
  let server: ChatServer;
  let modelId: string;
  let promptIds: number[];
  /** Greedy output of the base weights and of each step's adapter, from the engine directly. */
  const expected = new Map<string, number[]>();

  const params = (name: string, fields: Record<string, unknown> = {}): ChatParams => ({
    model: name,
    messages: [{ role: "user", content: "Which adapter are you?" }],
    temperature: 0,
    repetition_penalty: 1,
    max_completion_tokens: 8,
    ignore_eos: true,
    return_token_ids: true,
    ...fields,
  });

  /** A distinct, non-identity adapter per seed. */
  function adapterFor(seed: number): LoraAdapter {
    return randomizeAdapter(createLoraAdapter(readModelConfig(model.dir), { seed }), seed, 2);
  }

  async function directGreedy(adapter: { id: string; dir: string } | undefined): Promise<number[]> {
    const engine = await server.engine("test/tiny");
    const events: GenerateEvent[] = [];
    const request = { requestId: `direct-${Math.random()}`, promptTokenIds: promptIds, params: defaultSamplingParams({ temperature: 0, maxTokens: 8, ignoreEos: true }), ...(adapter ? { adapter } : {}) };
    for await (const event of engine.generate(request)) events.push(event);
    return choiceIds(events);
  }

  /** Stores the adapter's files as blobs, then makes the checkpoint visible; records its expected output. */
  async function commitCheckpoint(step: number, seed: number): Promise<void> {
    const adapter = adapterFor(seed);
    const files: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(adapterFiles(adapter))) files[name] = await server.app.blobs.put(bytes);
    await insertCheckpoint(server.app.store.db, { modelId, step, files });
    const dir = `${adapterDirs}/seed-${seed}`;
    saveLoraAdapter(dir, adapter);
    expected.set(`step${step}`, await directGreedy({ id: `reference-${seed}`, dir }));
  }

  const register = async (key: string, name: string) => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: key, maxRetries: 0 });
    return client.post<{ id: string }>("/preview/models", { body: { project: "proj", name, base_model: "test/tiny" } });
  };

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
    modelId = (await register(server.app.keys.alice, "agent")).id;
    await register(server.app.keys.alice, "fresh");
    await register(server.app.keys.bob, "theirs");
    promptIds = (await server.create(params("test/tiny"))).prompt_token_ids!;
    expected.set("base", await directGreedy(undefined));
    await commitCheckpoint(1, 11);
    await commitCheckpoint(2, 22);
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(adapterDirs, { recursive: true, force: true });
  });

  it("serves each step with its own adapter under every name form", async () => {
    expect(new Set([...expected.values()].map((ids) => JSON.stringify(ids))).size).toBe(3);
    const names: [string, string][] = [
      ["wandb-artifact:///alice/proj/agent", "step2"],
      ["wandb-artifact:///alice/proj/agent:latest", "step2"],
      ["wandb-artifact:///alice/proj/agent:step1", "step1"],
      ["wandb-artifact://alice/proj/agent:step2", "step2"],
      ["artifact:///alice/proj/agent:step1", "step1"],
      ["artifact://alice/proj/agent", "step2"],
      ["agent@1", "step1"],
      ["agent@2", "step2"],
      ["test/tiny", "base"],
    ];
    for (const [name, weights] of names) {
      const completion = await server.create(params(name));
      expect(completion.model, name).toBe(name);
      expect(completion.prompt_token_ids, name).toEqual(promptIds);
      expect(completion.choices[0]!.token_ids, `${name} → ${weights}`).toEqual(expected.get(weights));
    }
  });

  it("defaults logprobs and token-id strings on for trained names only, with an explicit false winning", async () => {
    const trained = await server.create(params("agent@1"));
    const entries = trained.choices[0]!.logprobs!.content;
    expect(entries.map((entry) => entry.token)).toEqual(expected.get("step1")!.map((id) => `token_id:${id}`));
    expect(entries.every((entry) => Number.isFinite(entry.logprob) && entry.logprob <= 0)).toBe(true);
    expect((await server.create(params("test/tiny"))).choices[0]!.logprobs).toBeNull();
    expect((await server.create(params("agent@1", { logprobs: false }))).choices[0]!.logprobs).toBeNull();
    const decoded = await server.create(params("agent@1", { return_tokens_as_token_ids: false }));
    expect(decoded.choices[0]!.logprobs!.content.map((entry) => entry.token).join("")).toBe(decoded.choices[0]!.message.content);
    const stream = chunksOf(await readSse(await server.post({ ...params("wandb-artifact:///alice/proj/agent:step1"), stream: true })));
    const streamed = stream.flatMap((chunk: Chunk) => chunk.choices[0]?.logprobs?.content ?? []);
    expect(streamed.map((entry) => entry.token)).toEqual(entries.map((entry) => entry.token));
    expect(stream.every((chunk) => chunk.model === "wandb-artifact:///alice/proj/agent:step1")).toBe(true);
  });

  it("serves base weights for a model without checkpoints, and 404s unknown steps and other entities' models", async () => {
    for (const name of ["wandb-artifact:///alice/proj/fresh", "wandb-artifact:///alice/proj/fresh:latest", "fresh@0"]) {
      expect((await server.create(params(name))).choices[0]!.token_ids, name).toEqual(expected.get("base"));
    }
    for (const name of ["wandb-artifact:///alice/proj/agent:step9", "agent@9", "fresh@1", "wandb-artifact:///bob/proj/theirs", "theirs@0", "wandb-artifact:///alice/proj/theirs", "wandb-artifact:///alice/proj/agent:v1"]) {
      const error = await server.client.chat.completions.create(params(name)).catch((caught: unknown) => caught);
      expect(error, name).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).message, name).toContain(`The model \`${name}\` does not exist.`);
    }
    // Bob reads his own model, on the base weights.
    const bob = new OpenAI({ baseURL: server.baseURL, apiKey: server.app.keys.bob, maxRetries: 0 });
    const theirs = (await bob.chat.completions.create(params("wandb-artifact:///bob/proj/theirs"))) as unknown as { choices: { token_ids: number[] }[] };
    expect(theirs.choices[0]!.token_ids).toEqual(expected.get("base"));
  });

  it("serves a checkpoint committed while the server runs at once", async () => {
    expect((await server.create(params("wandb-artifact:///alice/proj/agent"))).choices[0]!.token_ids).toEqual(expected.get("step2"));
    await commitCheckpoint(3, 33);
    expect(expected.get("step3")).not.toEqual(expected.get("step2"));
    expect((await server.create(params("wandb-artifact:///alice/proj/agent"))).choices[0]!.token_ids).toEqual(expected.get("step3"));
    expect((await server.create(params("agent@3"))).choices[0]!.token_ids).toEqual(expected.get("step3"));
    expect((await server.create(params("agent@2"))).choices[0]!.token_ids).toEqual(expected.get("step2"));
  });
});
