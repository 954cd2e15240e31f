import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../testing/stores.js";
import { stepsNeededByActiveJobs } from "./checkpoint-guard.js";
import { insertCheckpoint } from "./checkpoints.js";
import { isUniqueViolation } from "./errors.js";
import { listJobEvents } from "./job-events.js";
import { claimJobs, type Lease, LeaseLostError, reapExpiredLeases, releaseLease, renewLease, withLease } from "./job-leases.js";
import { beginJob, commitJobCheckpoint, recordJobEvent } from "./job-lifecycle.js";
import { createModel } from "./models.js";
import { cancelTrainingJob, createTrainingJob, getTrainingJobById } from "./training-jobs.js";

describe.each(testDialects)("job leases on %s", (dialect) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await openTestStore(dialect);
  });
  afterEach(async () => {
    await store.close();
  });

  const model = async (name: string) => (await createModel(store.db, { entity: "e", project: "p", name, base_model: "b" })).model.id;
  const job = async (modelId: string, config: unknown = {}) => (await createTrainingJob(store.db, { entity: "e", modelId, kind: "rl", input: { trajectory_groups: [] }, config, requestHash: "h" })).job;
  const lease = (jobId: string, workerId = "w1", leaseMs = 60_000): Lease => ({ jobId, workerId, leaseMs });
  const expireLease = (jobId: string) => store.db.updateTable("training_jobs").set({ lease_expires_at: "2000-01-01T00:00:00.000Z" }).where("id", "=", jobId).execute();

  it("numbers a model's jobs in submission order, also when created concurrently", async () => {
    const m = await model("m");
    const jobs = await Promise.all(Array.from({ length: 6 }, () => job(m)));
    expect(jobs.map((j) => j.position).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("claims only the oldest active job of each model, one running job per model", async () => {
    const [a, b] = [await model("a"), await model("b")];
    const a1 = await job(a);
    const a2 = await job(a);
    const b1 = await job(b);
    const claimed = await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 10 });
    expect(claimed.map((j) => j.id).sort()).toEqual([a1.id, b1.id].sort());
    expect(claimed.every((j) => j.status === "running" && j.attempts === 1 && j.lease_owner === "w1" && j.started_at !== null)).toBe(true);
    expect(await claimJobs(store.db, "w2", { leaseMs: 60_000, limit: 10 })).toEqual([]);

    // The database itself refuses a second running job on a model.
    const forced = store.db.updateTable("training_jobs").set({ status: "running" }).where("id", "=", a2.id).execute();
    await expect(forced).rejects.toSatisfy(isUniqueViolation);

    await commitJobCheckpoint(store.db, lease(a1.id), a, { step: 1, files: null });
    expect((await claimJobs(store.db, "w2", { leaseMs: 60_000, limit: 10 })).map((j) => j.id)).toEqual([a2.id]);
  });

  it("claims only the base models a worker takes (routing)", async () => {
    const other = (await createModel(store.db, { entity: "e", project: "p", name: "o", base_model: "pool/model" })).model.id;
    const [mine, pooled] = [await job(await model("m")), await job(other)];
    expect(await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 10, baseModels: { only: [] } })).toEqual([]);
    expect((await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 10, baseModels: { except: ["pool/model"] } })).map((j) => j.id)).toEqual([mine.id]);
    expect((await claimJobs(store.db, "w2", { leaseMs: 60_000, limit: 10, baseModels: { only: ["pool/model"] } })).map((j) => j.id)).toEqual([pooled.id]);
  });

  it("gives each job to exactly one of several racing workers", async () => {
    const models = await Promise.all(["a", "b", "c", "d", "e"].map(model));
    const jobs = await Promise.all(models.map((m) => job(m)));
    const claims = await Promise.all(["w1", "w2", "w3", "w4"].map((worker) => claimJobs(store.db, worker, { leaseMs: 60_000, limit: 5 })));
    const ids = claims.flat().map((j) => j.id);
    expect(ids.sort()).toEqual(jobs.map((j) => j.id).sort());
  });

  it("writes only while the lease is held: cancellation fences the worker off, with one terminal event", async () => {
    const m = await model("m");
    const j = await job(m);
    await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 1 });
    await beginJob(store.db, lease(j.id), m);
    await recordJobEvent(store.db, lease(j.id), "training_started", { num_sequences: 0 });
    await expect(recordJobEvent(store.db, lease(j.id, "intruder"), "gradient_step", {})).rejects.toBeInstanceOf(LeaseLostError);
    expect(await renewLease(store.db, lease(j.id))).toBe(true);

    expect((await cancelTrainingJob(store.db, "e", j.id, "stop")).cancelled).toBe(true);
    expect(await renewLease(store.db, lease(j.id))).toBe(false);
    await expect(commitJobCheckpoint(store.db, lease(j.id), m, { step: 1, files: null })).rejects.toBeInstanceOf(LeaseLostError);
    expect((await cancelTrainingJob(store.db, "e", j.id, "again")).cancelled).toBe(false);
    expect((await listJobEvents(store.db, j.id)).map((e) => [e.seq, e.type])).toEqual([
      [1, "training_started"],
      [2, "training_failed"],
    ]);
    expect(await store.db.selectFrom("checkpoints").selectAll().execute()).toEqual([]);
  });

  it("ends a job exactly once when its commit races a cancellation", async () => {
    for (let round = 0; round < 8; round++) {
      const m = await model(`race-${round}`);
      const j = await job(m);
      await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 1 });
      const results = await Promise.allSettled([commitJobCheckpoint(store.db, lease(j.id), m, { step: 1, files: null }), cancelTrainingJob(store.db, "e", j.id, "stop")]);
      const events = await listJobEvents(store.db, j.id);
      expect(events.filter((e) => e.type === "training_ended" || e.type === "training_failed")).toHaveLength(1);
      const committed = results[0].status === "fulfilled";
      const final = await getTrainingJobById(store.db, j.id);
      expect(final!.status).toBe(committed ? "succeeded" : "cancelled");
      const checkpoints = await store.db.selectFrom("checkpoints").select("step").where("model_id", "=", m).execute();
      expect(checkpoints.length).toBe(committed ? 1 : 0);
    }
  });

  it("requeues an expired job that wrote nothing, until its attempts run out, then fails it", async () => {
    const m = await model("m");
    const j = await job(m);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [claimed] = await claimJobs(store.db, `w${attempt}`, { leaseMs: 60_000, limit: 1 });
      expect(claimed).toMatchObject({ id: j.id, attempts: attempt });
      await expireLease(j.id);
      expect(await reapExpiredLeases(store.db, { maxAttempts: 3 })).toEqual({ requeued: [j.id], failed: [] });
      expect(await getTrainingJobById(store.db, j.id)).toMatchObject({ status: "queued", lease_owner: null, attempts: attempt });
    }
    await claimJobs(store.db, "w3", { leaseMs: 60_000, limit: 1 });
    await expireLease(j.id);
    expect(await reapExpiredLeases(store.db, { maxAttempts: 3 })).toEqual({ requeued: [], failed: [j.id] });
    const events = await listJobEvents(store.db, j.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.error_message).toMatch(/attempted 3 times/);
  });

  it("fails an expired job that had started, and leaves live leases alone", async () => {
    const [a, b] = [await model("a"), await model("b")];
    const started = await job(a);
    const live = await job(b);
    await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 2 });
    await recordJobEvent(store.db, lease(started.id), "training_started", { num_sequences: 3 });
    await expireLease(started.id);
    expect(await reapExpiredLeases(store.db, { maxAttempts: 3 })).toEqual({ requeued: [], failed: [started.id] });
    expect((await getTrainingJobById(store.db, started.id))!.status).toBe("failed");
    expect((await listJobEvents(store.db, started.id)).map((e) => e.type)).toEqual(["training_started", "training_failed"]);
    expect((await getTrainingJobById(store.db, live.id))!.status).toBe("running");
    // A lease given back on shutdown follows the same rule.
    expect(await releaseLease(store.db, lease(live.id), { maxAttempts: 3 })).toBe("requeued");
    expect(await releaseLease(store.db, lease(live.id), { maxAttempts: 3 })).toBeUndefined();
  });

  it("names the checkpoints that active jobs need", async () => {
    const m = await model("m");
    for (const step of [1, 2, 3, 4, 5]) await insertCheckpoint(store.db, { modelId: m, step, files: null });
    expect(await stepsNeededByActiveJobs(store.db, m)).toEqual(new Set());
    const running = await job(m, { kl_penalty_coef: 0.1, kl_penalty_reference_step: null, kl_penalty_step_lag: 4 });
    await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 1 });
    await beginJob(store.db, lease(running.id), m, (base) => base - 4);
    expect(await stepsNeededByActiveJobs(store.db, m)).toEqual(new Set([5, 1]));
    await job(m, { kl_penalty_coef: 0.1, kl_penalty_reference_step: 2, kl_penalty_step_lag: null });
    await job(m, { kl_penalty_coef: 0.1, kl_penalty_reference_step: null, kl_penalty_step_lag: 1 });
    await job(m, { kl_penalty_coef: 0, kl_penalty_reference_step: 3, kl_penalty_step_lag: null });
    expect(await stepsNeededByActiveJobs(store.db, m)).toEqual(new Set([5, 1, 2, 4]));
  });

  it("refuses a second writer of the same event sequence number", async () => {
    const m = await model("m");
    const j = await job(m);
    await claimJobs(store.db, "w1", { leaseMs: 60_000, limit: 1 });
    await recordJobEvent(store.db, lease(j.id), "training_started", { num_sequences: 0 });
    const duplicate = store.db.insertInto("training_job_events").values({ id: "x", job_id: j.id, seq: 1, type: "gradient_step", data: "{}", created_at: "t" }).execute();
    await expect(duplicate).rejects.toSatisfy(isUniqueViolation);
    await expect(withLease(store.db, lease(j.id), async () => "ok")).resolves.toBe("ok");
  });
});
