import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJson } from "../../../store/json.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { registerModel, sampledChoice } from "../../../testing/training.js";

const row = (answer: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: "Q" },
      { role: "assistant", content: answer },
    ],
  });
const jsonl = (count: number) => `${Array.from({ length: count }, (_, index) => row(`A${index}`)).join("\n")}\n`;

/** The artifact store and SFT job creation (docs/api/training.md#sft-jobs, docs/api/training.md#sft), through HTTP. */
describe.each(testDialects)("artifacts and SFT jobs on %s", (dialect) => {
  let t: TestApp;
  let modelId: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    modelId = await registerModel(t, "m");
  });
  afterAll(async () => {
    await t.close();
  });

  const upload = (payload: Record<string, unknown>, key = t.keys.alice) => t.request(key, { method: "POST", url: "/v1/preview/artifacts", payload });
  const sft = (payload: Record<string, unknown>, key = t.keys.alice) => t.request(key, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, ...payload } });

  it("stores versions v0, v1, … of an artifact and returns its URL", async () => {
    const first = await upload({ project: "proj", name: "data", files: [{ name: "train.jsonl", text: jsonl(3) }], metadata: { format: "jsonl" } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      entity: "alice",
      project: "proj",
      name: "data",
      version: "v0",
      type: "dataset",
      url: "wandb-artifact:///alice/proj/data:v0",
      files: [{ name: "train.jsonl", size: Buffer.byteLength(jsonl(3)), digest: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      metadata: { format: "jsonl" },
    });
    const second = await upload({ project: "proj", name: "data", files: [{ name: "train.jsonl", base64: Buffer.from(jsonl(4)).toString("base64") }] });
    expect(second.json()).toMatchObject({ version: "v1", url: "wandb-artifact:///alice/proj/data:v1" });
    const concurrent = await Promise.all([1, 2, 3].map(() => upload({ project: "proj", name: "race", files: [{ name: "a.txt", text: "x" }] })));
    expect(concurrent.map((res) => res.json().version).sort()).toEqual(["v0", "v1", "v2"]);
  });

  it("rejects bad uploads with 422 and another entity with 403", async () => {
    const bad = await upload({
      project: "proj",
      name: "bad/name",
      files: [
        { name: "../x", text: "a" },
        { name: "b", text: "a", base64: "YQ==" },
        { name: "c", base64: "%%%" },
      ],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual(["body.name", "body.files.0.name", "body.files.1.text", "body.files.2.base64"]);
    const dup = await upload({
      project: "proj",
      name: "d",
      files: [
        { name: "a", text: "1" },
        { name: "a", text: "2" },
      ],
    });
    expect(dup.json().detail[0].loc).toEqual(["body", "files", 1, "name"]);
    expect((await upload({ project: "proj", name: "d", files: [] })).json().detail[0].loc).toEqual(["body", "files"]);
    const foreign = await upload({ entity: "bob", project: "proj", name: "d", files: [{ name: "a", text: "1" }] });
    expect(foreign.statusCode).toBe(403);
  });

  it("creates an SFT job from every URL form and resolves the exact version", async () => {
    await upload({ project: "proj", name: "forms", files: [{ name: "train.jsonl", text: jsonl(2) }] });
    await upload({ project: "proj", name: "forms", files: [{ name: "train.jsonl", text: jsonl(4) }] });
    const cases: [string, number][] = [
      ["wandb-artifact:///alice/proj/forms:v0", 0],
      ["wandb-artifact://alice/proj/forms:v1", 1],
      ["artifact:///alice/proj/forms:latest", 1],
      ["wandb-artifact:///alice/proj/forms", 1],
    ];
    for (const [url, version] of cases) {
      const res = await sft({ training_data_url: url, config: { learning_rate: 1e-4 } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ kind: "sft", status: "queued", model_id: modelId });
      const stored = await t.store.db.selectFrom("training_jobs").select(["input", "config"]).where("id", "=", res.json().id).executeTakeFirstOrThrow();
      expect(decodeJson<{ artifact: { version: number }; num_rows: number }>(stored.input)).toMatchObject({ artifact: { version }, num_rows: version === 0 ? 2 : 4 });
      expect(decodeJson(stored.config)).toEqual({ batch_size: 2, learning_rates: Array(version === 0 ? 1 : 2).fill(1e-4), assistant_turns: "all", metric_logging: null, experimental_config: {} });
    }
  });

  it("resolves batch size and a per-batch learning-rate list, and rejects a list of the wrong length", async () => {
    await upload({ project: "proj", name: "five", files: [{ name: "train.jsonl", text: jsonl(5) }] });
    const url = "wandb-artifact:///alice/proj/five:v0";
    const ok = await sft({ training_data_url: url, config: { batch_size: 2, learning_rate: [3e-4, 2e-4, 1e-4], metric_logging: { enabled: true, target_training_step: 1 } }, experimental_config: { x: 1 } });
    expect(ok.statusCode, ok.body).toBe(200);
    const stored = await t.store.db.selectFrom("training_jobs").select("config").where("id", "=", ok.json().id).executeTakeFirstOrThrow();
    expect(decodeJson(stored.config)).toEqual({
      batch_size: 2,
      learning_rates: [3e-4, 2e-4, 1e-4],
      assistant_turns: "all",
      metric_logging: { enabled: true, target_training_step: 1 },
      experimental_config: { x: 1 },
    });
    const auto = await sft({ training_data_url: url, config: { batch_size: "auto", learning_rate: [1, 0.5, 0.25], assistant_turns: "last" } });
    expect(auto.statusCode, auto.body).toBe(200);
    const wrong = await sft({ training_data_url: url, config: { batch_size: 5, learning_rate: [1e-4, 1e-4] } });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().detail).toEqual([{ loc: ["body", "config", "learning_rate"], msg: expect.stringMatching(/lists 2 rates but the data makes 1 batches/), type: "value_error" }]);
    const badConfig = await sft({ training_data_url: url, config: { batch_size: 0, learning_rate: [], assistant_turns: "first" } });
    expect(badConfig.json().detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual(["body.config.batch_size", "body.config.learning_rate", "body.config.assistant_turns"]);
    for (const learningRate of [1e308, [1e-4, 1e308], 2]) {
      const poisonous = await sft({ training_data_url: url, config: { learning_rate: learningRate } });
      expect(poisonous.statusCode, JSON.stringify(learningRate)).toBe(422);
      expect(JSON.stringify(poisonous.json().detail)).toMatch(/"loc":\["body","config","learning_rate".*less than or equal to 1/);
    }
  });

  it("reads trajectories.jsonl and trajectory-form lines, with metadata.json", async () => {
    const line = JSON.stringify({ messages_and_choices: [{ role: "user", content: "Q" }, sampledChoice("A")], reward: 1 });
    const res = await upload({
      project: "proj",
      name: "traj",
      files: [
        { name: "trajectories.jsonl", text: `${line}\n${line}\n` },
        { name: "metadata.json", text: '{"num_trajectories": 2}' },
      ],
    });
    const job = await sft({ training_data_url: res.json().url });
    expect(job.statusCode, job.body).toBe(200);
  });

  it.each([
    ["not a url", /expected an artifact URL/],
    ["wandb-artifact:///alice/proj/missing:v0", /was not found/],
    ["wandb-artifact:///alice/proj/forms:v9", /was not found/],
    ["wandb-artifact:///alice/proj/forms:step3", /unknown artifact alias/],
    ["wandb-artifact:///bob/proj/bobs:v0", /was not found/],
  ])("rejects the unresolvable URL %s with a 422 naming training_data_url", async (url, message) => {
    await upload({ project: "proj", name: "bobs", files: [{ name: "train.jsonl", text: jsonl(1) }] }, t.keys.bob);
    const res = await sft({ training_data_url: url });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ loc: ["body", "training_data_url"], msg: expect.stringMatching(message), type: "value_error" }]);
  });

  it.each([
    [[{ name: "notes.txt", text: "x" }], /no train.jsonl/],
    [[{ name: "train.jsonl", text: "\n\n" }], /has no rows/],
    [[{ name: "train.jsonl", text: `${row("a")}\n{oops\n` }], /train.jsonl line 2: not valid JSON/],
    [
      [
        {
          name: "train.jsonl",
          text: JSON.stringify({
            messages: [
              { role: "assistant", content: "a" },
              { role: "user", content: "b" },
            ],
          }),
        },
      ],
      /line 1: the last message must have role "assistant"/,
    ],
    [[{ name: "train.jsonl", text: JSON.stringify({ messages: [{ role: "wizard", content: "a" }] }) }], /line 1, message 0: role "wizard"/],
    [[{ name: "train.jsonl", text: JSON.stringify({ messages: [] }) }], /non-empty list/],
    [
      [
        { name: "train.jsonl", text: row("a") },
        { name: "metadata.json", text: "{" },
      ],
      /metadata.json/,
    ],
  ])("rejects unusable training data %#", async (files, message) => {
    const res = await upload({ project: "proj", name: "broken", files });
    const job = await sft({ training_data_url: res.json().url });
    expect(job.statusCode).toBe(422);
    expect(job.json().detail[0]).toMatchObject({ loc: ["body", "training_data_url"], msg: expect.stringMatching(message) });
  });

  it("returns the queued job for an identical re-post on the same data, and a new job once the data changed", async () => {
    const model = await registerModel(t, "dedupe");
    await upload({ project: "proj", name: "same", files: [{ name: "train.jsonl", text: jsonl(2) }] });
    const body = { model_id: model, training_data_url: "wandb-artifact:///alice/proj/same:latest" };
    const first = await sft(body);
    const again = await sft(body);
    expect(again.json().id).toBe(first.json().id);
    await upload({ project: "proj", name: "same", files: [{ name: "train.jsonl", text: jsonl(3) }] });
    const changed = await sft(body);
    expect(changed.json().id).not.toBe(first.json().id);
    const keyed = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: body, headers: { "idempotency-key": "sft-1" } });
    expect([first.json().id, changed.json().id]).not.toContain(keyed.json().id);
    const replay = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: body, headers: { "idempotency-key": "sft-1" } });
    expect(replay.json().id).toBe(keyed.json().id);
  });

  it("needs model_id and training_data_url, and 404s another entity's model", async () => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: {} });
    expect(res.json().detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual(["body.model_id", "body.training_data_url"]);
    const bobsModel = await registerModel(t, "bobs-model", t.keys.bob);
    const foreign = await sft({ model_id: bobsModel, training_data_url: "wandb-artifact:///alice/proj/forms:v0" });
    expect(foreign.statusCode).toBe(404);
  });
});
