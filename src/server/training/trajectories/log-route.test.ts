import { afterEach, describe, expect, it } from "vitest";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { registerModel, trajectory } from "../../../testing/training.js";

describe.each(testDialects)("POST /v1/preview/models/{id}/log on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  const log = (modelId: string, payload: Record<string, unknown>) => t.request(t.keys.alice, { method: "POST", url: `/v1/preview/models/${modelId}/log`, payload });
  const checkpoints = async (modelId: string) => (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints` })).json().data;

  it("stores {split}/{metric} on the current step, merging later calls, and lists them with the checkpoints", async () => {
    t = await startTestApp(dialect);
    const modelId = await registerModel(t, "m");
    await insertCheckpoint(t.store.db, { modelId, step: 1, files: null });
    await insertCheckpoint(t.store.db, { modelId, step: 2, files: null });
    const groups = [{ trajectories: [trajectory(1, { metrics: { turns: 3 } }), trajectory(0, { metrics: { turns: 1 } })], exceptions: [{ type: "<class 'ValueError'>", message: "boom", traceback: "" }] }];
    const res = await log(modelId, { model_id: modelId, split: "val", trajectory_groups: groups });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ step: 2, metrics: { "val/reward": 0.5, "val/exception_rate": 1 / 3, "val/reward_std_dev": 0.5, "val/turns": 2 } });
    await log(modelId, { split: "train", trajectory_groups: [{ trajectories: [trajectory(4)] }] });
    await log(modelId, { split: "val", trajectory_groups: [{ trajectories: [trajectory(0.25)] }] });
    expect(await checkpoints(modelId)).toEqual([
      { id: expect.any(String), step: 1, metrics: {} },
      {
        id: expect.any(String),
        step: 2,
        metrics: { "val/reward": 0.25, "val/exception_rate": 0, "val/reward_std_dev": 0.5, "val/turns": 2, "train/reward": 4, "train/exception_rate": 0 },
      },
    ]);
  });

  it("gives a model without checkpoints a step-0 checkpoint for its metrics, even under concurrent logs", async () => {
    t = await startTestApp(dialect);
    const modelId = await registerModel(t, "m");
    const results = await Promise.all(["a", "b", "c", "d"].map((split) => log(modelId, { split, trajectory_groups: [{ trajectories: [trajectory(1)] }] })));
    expect(results.map((res) => res.statusCode)).toEqual([200, 200, 200, 200]);
    const list = await checkpoints(modelId);
    expect(list).toHaveLength(1);
    expect(list[0].step).toBe(0);
    expect(Object.keys(list[0].metrics).sort()).toEqual(["a/exception_rate", "a/reward", "b/exception_rate", "b/reward", "c/exception_rate", "c/reward", "d/exception_rate", "d/reward"]);
    // Nothing to log changes nothing.
    expect((await log(modelId, { split: "val", trajectory_groups: [] })).json()).toEqual({ step: 0, metrics: {} });
  });

  it("validates the body and 404s an unknown model", async () => {
    t = await startTestApp(dialect);
    const modelId = await registerModel(t, "m");
    const bad = await log(modelId, { split: "a/b", trajectory_groups: [{ trajectories: [{ reward: "high" }] }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual(["body.split", "body.trajectory_groups.0.trajectories.0.reward"]);
    expect((await log(modelId, {})).json().detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual(["body.split", "body.trajectory_groups"]);
    const unknown = await log("00000000-0000-4000-8000-000000000000", { split: "val", trajectory_groups: [] });
    expect(unknown.statusCode).toBe(404);
  });
});
