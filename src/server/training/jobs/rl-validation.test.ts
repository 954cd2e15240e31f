import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJson } from "../../../store/json.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { flatGroups, registerModel, sampledChoice, trajectory } from "../../../testing/training.js";
import { RL_CONFIG_DEFAULTS } from "../../../engine/train/config.js";

/**
 * The docs/api/training.md#trajectories, docs/api/training.md#rl-training rules on RL job requests, through
 * HTTP: every rejection is a 422 naming the field.
 */
describe.each(testDialects)("RL job validation on %s", (dialect) => {
  let t: TestApp;
  let modelId: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    modelId = await registerModel(t, "m");
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (payload: Record<string, unknown>) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/training-jobs", payload });
  const storedConfig = async (jobId: string) => {
    const row = await t.store.db.selectFrom("training_jobs").select(["config", "input"]).where("id", "=", jobId).executeTakeFirstOrThrow();
    return { config: decodeJson<Record<string, unknown>>(row.config), input: decodeJson<{ trajectory_groups: Record<string, unknown>[] }>(row.input) };
  };
  const locs = (body: { detail: { loc: (string | number)[] }[] }) => body.detail.map((item) => item.loc.join("."));

  it("accepts ART's full G3 request and stores the resolved config", async () => {
    const experimental_config = {
      advantage_balance: 0.0,
      allow_training_without_logprobs: false,
      epsilon: null,
      epsilon_high: null,
      importance_sampling_level: "token",
      kimi_k2_tau: null,
      kl_penalty_coef: 0.0,
      kl_penalty_reference_step: null,
      kl_penalty_source: "current_learner",
      kl_penalty_step_lag: null,
      kl_ref_adapter_path: null,
      learning_rate: 5e-6,
      logprob_calculation_chunk_size: 1024,
      loss_fn: "cispo",
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      normalize_advantages: true,
      num_trajectories_learning_rate_multiplier_power: 0.0,
      packed_sequence_length: null,
      plot_tensors: false,
      ppo: false,
      precalculate_logprobs: false,
      scale_learning_rate_by_reward_std_dev: false,
      scale_rewards: true,
      truncated_importance_sampling: null,
      some_future_knob: 3,
    };
    const res = await post({ model_id: modelId, trajectory_groups: flatGroups(), experimental_config, unknown_top_level: true });
    expect(res.statusCode, res.body).toBe(200);
    const { config } = await storedConfig(res.json().id);
    expect(config).toEqual({ ...RL_CONFIG_DEFAULTS, epsilon: 1, epsilon_high: 4 });
    expect(config).not.toHaveProperty("some_future_knob");
  });

  it("treats null and absent alike, and derives the dependent defaults", async () => {
    const cases: [Record<string, unknown> | null, Record<string, unknown>][] = [
      [null, { loss_fn: "cispo", epsilon: 1, epsilon_high: 4, learning_rate: 5e-6 }],
      [{ ppo: true }, { loss_fn: "ppo", epsilon: 0.2, epsilon_high: 0.2 }],
      [
        { loss_fn: "ppo", epsilon: 0.3 },
        { loss_fn: "ppo", epsilon: 0.3, epsilon_high: 0.3 },
      ],
      [{ normalize_advantages: false, scale_rewards: null }, { scale_rewards: false }],
      [{ vendor_k2_tau: 0.5 }, { kimi_k2_tau: 0.5 }],
      [
        { learning_rate: null, kl_penalty_coef: 0.1, kl_penalty_step_lag: 2 },
        { learning_rate: 5e-6, kl_penalty_coef: 0.1, kl_penalty_step_lag: 2 },
      ],
    ];
    for (const [experimental_config, expected] of cases) {
      const res = await post({ model_id: modelId, trajectory_groups: [], experimental_config });
      expect(res.statusCode, JSON.stringify(experimental_config)).toBe(200);
      expect((await storedConfig(res.json().id)).config).toMatchObject(expected);
    }
  });

  it.each([
    [{ kl_ref_adapter_path: "/home/me/adapter" }, "experimental_config.kl_ref_adapter_path", /cannot read/],
    [{ kl_penalty_reference_step: 1, kl_penalty_step_lag: 1 }, "experimental_config.kl_penalty_step_lag", /cannot both be set/],
    [{ kl_penalty_step_lag: 0 }, "experimental_config.kl_penalty_step_lag", /greater than or equal to 1/],
    [{ kl_penalty_reference_step: -1 }, "experimental_config.kl_penalty_reference_step", /greater than or equal to 0/],
    [{ kl_penalty_coef: 0.1, kl_penalty_reference_step: 500 }, "experimental_config.kl_penalty_reference_step", /no checkpoint at step 500/],
    [{ loss_fn: "grpo" }, "experimental_config.loss_fn", /'cispo' or 'ppo'/],
    [{ loss_fn: "cispo", ppo: true }, "experimental_config.loss_fn", /contradicts/],
    [{ importance_sampling_level: "tokens" }, "experimental_config.importance_sampling_level", /'token'/],
    [{ advantage_balance: 1.5 }, "experimental_config.advantage_balance", /less than or equal to 1/],
    [{ learning_rate: 0 }, "experimental_config.learning_rate", /greater than 0/],
    [{ learning_rate: "fast" }, "experimental_config.learning_rate", /valid number/],
    [{ learning_rate: 1e30 }, "experimental_config.learning_rate", /less than or equal to 1/],
    [{ num_trajectories_learning_rate_multiplier_power: 1e6 }, "experimental_config.num_trajectories_learning_rate_multiplier_power", /less than or equal to 2/],
    [{ num_trajectories_learning_rate_multiplier_power: -3 }, "experimental_config.num_trajectories_learning_rate_multiplier_power", /greater than or equal to -2/],
    [{ epsilon_high: 1e300 }, "experimental_config.epsilon_high", /less than or equal to 1000000/],
    [{ kl_penalty_coef: 1e9 }, "experimental_config.kl_penalty_coef", /less than or equal to 10000/],
    [{ kimi_k2_tau: -1e9 }, "experimental_config.kimi_k2_tau", /greater than or equal to -10000/],
    [{ packed_sequence_length: 2 ** 30 }, "experimental_config.packed_sequence_length", /less than or equal to 1048576/],
    [{ packed_sequence_length: 1000 }, "experimental_config.packed_sequence_length", /multiple/],
    [{ kimi_k2_tau: 0.1, vendor_k2_tau: 0.2 }, "experimental_config.vendor_k2_tau", /same setting/],
  ])("rejects experimental_config %j", async (experimental_config, loc, message) => {
    const res = await post({ model_id: modelId, trajectory_groups: [], experimental_config });
    expect(res.statusCode).toBe(422);
    expect(locs(res.json())).toEqual([`body.${loc}`]);
    expect(res.json().detail[0].msg).toMatch(message);
  });

  it("accepts a KL reference step that exists, is 0, or will be created by a queued job", async () => {
    const fresh = await registerModel(t, "kl-reference");
    const withReference = (step: number) => post({ model_id: fresh, trajectory_groups: [], experimental_config: { kl_penalty_coef: 0.1, kl_penalty_reference_step: step } });
    expect((await withReference(0)).statusCode).toBe(200); // the base weights; this queues job A, which will create step 1
    expect((await withReference(1)).statusCode).toBe(200); // created by A before this job B runs
    expect((await withReference(3)).statusCode).toBe(422); // A and B reach step 2 at most
  });

  it("checks trajectory groups and tells Choices from messages by the message key", async () => {
    const good = trajectory(1, { messages_and_choices: [{ role: "user", content: "hi" }, sampledChoice("yo"), { role: "tool", content: "x", tool_call_id: "c1" }] });
    const accepted = await post({ model_id: modelId, trajectory_groups: [{ trajectories: [good, { messages_and_choices: [] }] }] });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const { input } = await storedConfig(accepted.json().id);
    const stored = input.trajectory_groups[0] as { trajectories: Record<string, unknown>[]; exceptions: unknown[] };
    // Defaults filled in, unknown keys (stop_reason, refusal, tool_call_id) kept.
    expect(stored.exceptions).toEqual([]);
    expect(stored.trajectories[1]).toMatchObject({ reward: 0, tools: null, additional_histories: [], metrics: {}, metadata: {}, logs: [] });
    expect((stored.trajectories[0]!.messages_and_choices as Record<string, unknown>[])[1]).toMatchObject({ stop_reason: null, message: { refusal: null } });
    expect((stored.trajectories[0]!.messages_and_choices as Record<string, unknown>[])[2]).toMatchObject({ tool_call_id: "c1" });

    const bad = await post({
      model_id: modelId,
      trajectory_groups: [
        {
          trajectories: [
            { messages_and_choices: [{ role: "robot", content: "x" }, { message: { content: 5 } }, { message: {}, logprobs: { content: [{ token: "a" }] } }, "text"], reward: null },
            { exchanges: [] },
            { messages_and_choices: [], metrics: { ok: "yes" } },
          ],
        },
        { trajectories: "none" },
      ],
    });
    expect(bad.statusCode).toBe(422);
    expect(locs(bad.json())).toEqual([
      "body.trajectory_groups.0.trajectories.0.messages_and_choices.0.role",
      "body.trajectory_groups.0.trajectories.0.messages_and_choices.1.message.content",
      "body.trajectory_groups.0.trajectories.0.messages_and_choices.2.logprobs.content.0.logprob",
      "body.trajectory_groups.0.trajectories.0.messages_and_choices.3",
      "body.trajectory_groups.0.trajectories.0.reward",
      "body.trajectory_groups.0.trajectories.1.exchanges",
      "body.trajectory_groups.0.trajectories.2.metrics.ok",
      "body.trajectory_groups.1.trajectories",
    ]);
    expect(bad.json().detail[2]).toMatchObject({ msg: "Field required", type: "missing" });
    expect(bad.json().detail[5]).toMatchObject({ type: "dict_type" });
  });

  it("refuses negative or malformed sampled token ids instead of training on a stand-in token", async () => {
    const withChoice = (choice: Record<string, unknown>) => ({ trajectories: [{ reward: 1, messages_and_choices: [{ role: "user", content: "Q" }, choice] }] });
    const negative = sampledChoice("A", [101, -5]);
    const ids = { ...sampledChoice("A"), token_ids: [101, -2] };
    const bytes = sampledChoice("A");
    (bytes.logprobs as { content: { bytes: number[] }[] }).content[0]!.bytes = [300];
    const res = await post({ model_id: modelId, trajectory_groups: [withChoice(negative), withChoice(ids), withChoice(bytes)] });
    expect(res.statusCode).toBe(422);
    expect(locs(res.json())).toEqual([
      "body.trajectory_groups.0.trajectories.0.messages_and_choices.1.logprobs.content.1.token",
      "body.trajectory_groups.1.trajectories.0.messages_and_choices.1.token_ids.1",
      "body.trajectory_groups.2.trajectories.0.messages_and_choices.1.logprobs.content.0.bytes.0",
    ]);
    expect(res.json().detail[0].msg).toMatch(/non-negative integer id/);
  });

  it("documents the training routes in /openapi.json from the same schemas", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    for (const path of [
      "/v1/preview/training-jobs",
      "/v1/preview/sft-training-jobs",
      "/v1/preview/training-jobs/{training_job_id}",
      "/v1/preview/training-jobs/{training_job_id}/events",
      "/v1/preview/training-jobs/{training_job_id}/cancel",
      "/v1/preview/models/{model_id}/log",
      "/v1/preview/artifacts",
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const body = doc.paths["/v1/preview/training-jobs"].post.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(["model_id", "trajectory_groups"]);
    expect(Object.keys(body.properties.experimental_config.anyOf[0].properties)).toEqual(expect.arrayContaining(["learning_rate", "kl_penalty_step_lag", "loss_fn"]));
    const events = doc.paths["/v1/preview/training-jobs/{training_job_id}/events"].get;
    expect(events.parameters.find((p: { name: string }) => p.name === "limit").schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
  });

  it("requires model_id and trajectory_groups, and answers an unknown model with 404", async () => {
    const res = await post({});
    expect(locs(res.json())).toEqual(["body.model_id", "body.trajectory_groups"]);
    const notUuid = await post({ model_id: "m", trajectory_groups: [] });
    expect(notUuid.json().detail[0]).toMatchObject({ loc: ["body", "model_id"], type: "uuid_parsing" });
    const unknown = await post({ model_id: "00000000-0000-4000-8000-000000000000", trajectory_groups: [] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: "Model '00000000-0000-4000-8000-000000000000' not found" });
  });
});
