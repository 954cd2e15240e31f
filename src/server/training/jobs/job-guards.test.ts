import { afterEach, describe, expect, it } from "vitest";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { allEvents, createRlJob, isTerminal, registerModel, waitForJob } from "../../../testing/training.js";

/** What deleting checkpoints and models does while jobs need them. */
describe.each(testDialects)("deletions beside active jobs on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  const deleteSteps = (modelId: string, steps: number[]) => t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${modelId}/checkpoints`, payload: { steps } });

  it("refuses to delete the checkpoints a running or queued job needs, with 409 and no retry", async () => {
    t = await startTestApp(dialect, { worker: { stepDelayMs: 500 } });
    const modelId = await registerModel(t, "m");
    for (const step of [1, 2, 3]) await insertCheckpoint(t.store.db, { modelId, step, files: null });
    const running = await createRlJob(t, modelId);
    const queued = await createRlJob(t, modelId, [], t.keys.alice, { experimental_config: { kl_penalty_coef: 0.1, kl_penalty_reference_step: 1 } });
    await waitForJob(t, running, (job) => job.status === "running");

    const refused = await deleteSteps(modelId, [1, 2, 3]);
    expect(refused.statusCode).toBe(409);
    expect(refused.headers["x-should-retry"]).toBe("false");
    expect(refused.json().detail).toMatch(/step\(s\) 1, 3 are needed by a queued or running training job/);
    expect((await deleteSteps(modelId, [2])).json()).toEqual({ deleted_count: 1, not_found_steps: [] });

    await waitForJob(t, queued, isTerminal);
    expect((await deleteSteps(modelId, [1, 3])).json()).toEqual({ deleted_count: 2, not_found_steps: [] });
    const steps = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints` })).json().data.map((c: { step: number }) => c.step);
    expect(steps).toEqual([4, 5]);
  });

  it("cancels a deleted model's jobs, which stay readable and end with training_failed", async () => {
    t = await startTestApp(dialect, { worker: { stepDelayMs: 500 } });
    const modelId = await registerModel(t, "m");
    const running = await createRlJob(t, modelId);
    const queued = await createRlJob(t, modelId);
    await waitForJob(t, running, (job) => job.status === "running");
    const res = await t.request(t.keys.alice, { method: "DELETE", url: `/v1/preview/models/${modelId}` });
    expect(res.json()).toEqual({ model_id: modelId, deleted_checkpoints: 0, deleted_run: true });
    for (const id of [running, queued]) {
      const job = await waitForJob(t, id, () => true);
      expect(job).toMatchObject({ status: "cancelled", error_message: "Training job was cancelled because its model was deleted" });
      expect((await allEvents(t, id)).at(-1)).toMatchObject({ type: "training_failed", data: { error_message: job.error_message } });
    }
    while (t.worker!.activeJobIds.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await t.store.db.selectFrom("checkpoints").selectAll().execute()).toEqual([]);
  });
});
