import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { startOf, traceClient } from "../../../testing/trace.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../../testing/trainer-app.js";
import { allEvents, createRlJob, flatGroups, isTerminal, registerModel, trajectory, varyingGroups, waitForJob } from "../../../testing/training.js";

describe.each(testDialects)("browse routes on %s", (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(dialect, { baseModels: ["test/base"] });
  });
  afterEach(async () => {
    await t.close();
  });

  const get = (url: string, key = t.keys.alice) => t.request(key, { method: "GET", url });

  it("lists and reads the caller's models only, optionally by project", async () => {
    const first = await registerModel(t, "a");
    await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "other", name: "b", base_model: "test/base" } });
    await registerModel(t, "bobs", t.keys.bob);
    const all = (await get("/v1/preview/models")).json();
    expect(all.object).toBe("list");
    expect(all.data.map((m: { name: string }) => m.name)).toEqual(["a", "b"]);
    expect((await get("/v1/preview/models?project=other")).json().data.map((m: { name: string }) => m.name)).toEqual(["b"]);
    expect((await get(`/v1/preview/models/${first}`)).json()).toMatchObject({ id: first, name: "a", project: "proj", base_model: "test/base" });
    expect((await get(`/v1/preview/models/${first}`, t.keys.bob)).statusCode).toBe(404);
    expect((await get("/v1/preview/models?project=a/b")).statusCode).toBe(422);
    expect((await get("/v1/preview/models/not-a-uuid")).statusCode).toBe(422);
  });

  it("pages a model's jobs newest first, and hides them from other entities", async () => {
    const modelId = await registerModel(t, "m");
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await createRlJob(t, modelId, flatGroups(1 + i)));
    const page = (await get(`/v1/preview/models/${modelId}/training-jobs?limit=2`)).json();
    expect(page.data.map((job: { id: string }) => job.id)).toEqual([jobs[2], jobs[1]]);
    expect(page.data[0]).toMatchObject({ kind: "rl", status: "queued", model_id: modelId });
    expect(page.has_more).toBe(true);
    const rest = (await get(`/v1/preview/models/${modelId}/training-jobs?limit=2&after=${page.last_id}`)).json();
    expect(rest).toMatchObject({ has_more: false, data: [{ id: jobs[0] }] });
    const ascending = (await get(`/v1/preview/models/${modelId}/training-jobs?order=asc`)).json();
    expect(ascending.data.map((job: { id: string }) => job.id)).toEqual(jobs);
    expect((await get(`/v1/preview/models/${modelId}/training-jobs`, t.keys.bob)).statusCode).toBe(404);
    const badCursor = await get(`/v1/preview/models/${modelId}/training-jobs?after=nope`);
    expect(badCursor.statusCode).toBeGreaterThanOrEqual(400);
    expect(badCursor.statusCode).toBeLessThan(500);
  });

  it("returns an RL job's trajectory groups with group-relative advantages, paged", async () => {
    const modelId = await registerModel(t, "m");
    const groups = [
      { trajectories: [trajectory(1), trajectory(0), trajectory(0.5)], exceptions: [] },
      { trajectories: [trajectory(2), trajectory(2)], exceptions: [{ type: "ValueError", message: "boom" }] },
    ];
    const scaled = await createRlJob(t, modelId, groups);
    const res = (await get(`/v1/preview/training-jobs/${scaled}/trajectory-groups`)).json();
    expect(res).toMatchObject({ object: "list", total: 2, offset: 0, scale_rewards: true });
    const std = Math.sqrt((0.25 + 0.25 + 0) / 3);
    const advantages = res.data[0].trajectories.map((trajectory: { advantage: number }) => trajectory.advantage);
    expect(advantages[0]).toBeCloseTo(0.5 / (std + 1e-6), 9);
    expect(advantages[1]).toBeCloseTo(-0.5 / (std + 1e-6), 9);
    expect(advantages[2]).toBeCloseTo(0, 9);
    expect(res.data[0].trajectories[0].messages_and_choices[1]).toEqual({ role: "user", content: "Say hi" });
    expect(res.data[1]).toMatchObject({ index: 1, exceptions: [{ type: "ValueError", message: "boom" }] });

    const unscaled = await createRlJob(t, modelId, groups, t.keys.alice, { experimental_config: { scale_rewards: false } });
    const second = (await get(`/v1/preview/training-jobs/${unscaled}/trajectory-groups?offset=0&limit=1`)).json();
    expect(second).toMatchObject({ total: 2, scale_rewards: false });
    expect(second.data).toHaveLength(1);
    expect(second.data[0].trajectories.map((trajectory: { advantage: number }) => trajectory.advantage)).toEqual([0.5, -0.5, 0]);
    expect((await get(`/v1/preview/training-jobs/${unscaled}/trajectory-groups?offset=1`)).json().data[0].index).toBe(1);

    expect((await get(`/v1/preview/training-jobs/${scaled}/trajectory-groups`, t.keys.bob)).statusCode).toBe(404);
    expect((await get(`/v1/preview/training-jobs/${scaled}/trajectory-groups?limit=0`)).statusCode).toBe(422);
  });

  it("lists projects from models and from trace calls, per entity", async () => {
    await registerModel(t, "m");
    await registerModel(t, "n");
    const trace = traceClient(t, t.keys.alice);
    for (const project of ["proj", "traces-only", "zeta"]) await trace.json("/call/start", { start: startOf(`alice/${project}`) });
    await traceClient(t, t.keys.bob).json("/call/start", { start: startOf("bob/secret") });
    const res = (await get("/v1/preview/projects")).json();
    expect(res).toEqual({
      object: "list",
      entity: "alice",
      data: [
        { name: "proj", models: 2, traces: true },
        { name: "traces-only", models: 0, traces: true },
        { name: "zeta", models: 0, traces: true },
      ],
    });
    expect((await get("/v1/preview/projects", t.keys.bob)).json().data).toEqual([{ name: "secret", models: 0, traces: true }]);
  });

  it("documents the new routes in /openapi.json", async () => {
    const paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths;
    for (const path of ["/v1/preview/models", "/v1/preview/models/{model_id}", "/v1/preview/models/{model_id}/training-jobs", "/v1/preview/training-jobs/{training_job_id}/trajectory-groups", "/v1/preview/projects"]) {
      expect(paths[path]?.get, path).toBeDefined();
    }
  });
});

describe.each(testDialects)("model history on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it("merges logged metrics, each job's rollout metrics and its mean gradient-step metrics per step", async () => {
    t = await startTrainingApp(dialect);
    const modelId = await registerModel(t, "m", t.keys.alice, TINY_BASE_MODEL);
    const logged = await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/models/${modelId}/log`, payload: { split: "val", trajectory_groups: varyingGroups() } });
    expect(logged.json()).toMatchObject({ step: 0, metrics: { "val/reward": 0.5 } });
    const first = await createRlJob(t, modelId, varyingGroups());
    expect(await waitForJob(t, first, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    const second = await createRlJob(t, modelId, [{ trajectories: [trajectory(1), trajectory(0), trajectory(0), trajectory(0)], exceptions: [] }]);
    expect(await waitForJob(t, second, isTerminal)).toMatchObject({ status: "succeeded", step: 2 });

    const history = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/history` })).json();
    expect(history.data.map((row: { step: number }) => row.step)).toEqual([0, 1, 2]);
    const [zero, one, two] = history.data;
    expect(zero.metrics).toMatchObject({ "val/reward": 0.5, "job/reward": 0.5, "job/reward_std_dev": 0.5, "job/exception_rate": 0 });
    const events = await allEvents(t, first);
    const losses = events.filter((event) => event.type === "gradient_step").map((event) => event.data.loss as number);
    expect(losses.length).toBeGreaterThan(0);
    expect(zero.metrics["grad/loss"]).toBeCloseTo(losses.reduce((a, b) => a + b, 0) / losses.length, 12);
    expect(zero.metrics["grad/grad_norm"]).toBeGreaterThan(0);
    expect(zero.metrics["grad/learning_rate"]).toBeGreaterThan(0);
    expect(one.metrics).toMatchObject({ "job/reward": 0.25 });
    expect(one.metrics["grad/loss"]).toEqual(expect.any(Number));
    expect(two.metrics).toEqual({});
    expect((await t.request(t.keys.bob, { method: "GET", url: `/v1/preview/models/${modelId}/history` })).statusCode).toBe(404);
  });

  it("returns the trainer's recomputed logprob of each sampled token with the trajectory groups", async () => {
    t = await startTrainingApp(dialect);
    const modelId = await registerModel(t, "m", t.keys.alice, TINY_BASE_MODEL);
    const groups = [...varyingGroups(), ...flatGroups(1)];
    const before = await createRlJob(t, modelId, groups);
    const queued = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/training-jobs/${before}/trajectory-groups` })).json();
    expect(queued.data[0].trajectories[0].trainer_logprobs).toBeNull();
    expect(await waitForJob(t, before, isTerminal)).toMatchObject({ status: "succeeded" });

    const res = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/training-jobs/${before}/trajectory-groups` })).json();
    const trained = res.data[0].trajectories.map((trajectory: { trainer_logprobs: Record<string, number[]> | null }) => trajectory.trainer_logprobs);
    // The Choice is item 2 of messages_and_choices; one value per entry of its logprobs.content.
    for (const logprobs of trained) {
      expect(Object.keys(logprobs)).toEqual(["2"]);
      expect(logprobs["2"]).toHaveLength(2);
      for (const value of logprobs["2"]) expect(value).toBeLessThan(0);
    }
    // Equal rewards: not trained, so nothing recomputed.
    expect(res.data[1].trajectories[0].trainer_logprobs).toBeNull();
    // The same values the step measured against the sampler's -0.5 (float32-rounded here).
    const steps = (await allEvents(t, before)).filter((event) => event.type === "gradient_step");
    const reported = Math.max(...steps.map((event) => event.data.sampler_logprob_max_diff as number));
    const measured = Math.max(...trained.flatMap((logprobs: Record<string, number[]>) => logprobs["2"]!.map((value) => Math.abs(value + 0.5))));
    expect(measured).toBeCloseTo(reported, 5);
  });
});
