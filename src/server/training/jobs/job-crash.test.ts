import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeBaseModelDir } from "../../../testing/app.js";
import { type RunningServer, startServer } from "../../../testing/cli.js";
import { createTestDatabase, dropTestDatabase, makeTempDir, testDialects } from "../../../testing/stores.js";
import { flatGroups } from "../../../testing/training.js";

const key = "crash-test-key-0123456789";

async function call(server: RunningServer, method: string, url: string, body?: unknown) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * SIGKILL of a serving process in the middle of a job (issue 5, item 9): after a restart the job
 * ends with training_failed (it had started, so it is not resumed), no partial checkpoint appears,
 * event ids stay unique and ordered, and the model's next job runs.
 */
describe.each(testDialects)("a job killed mid-run on %s", (dialect) => {
  it("ends with training_failed after a restart, and the queue moves on", async () => {
    const dataDir = makeTempDir();
    const databaseUrl = dialect === "postgres" ? await createTestDatabase() : undefined;
    writeBaseModelDir(path.join(dataDir, "models"), "test/base");
    const env = { FLYWHEEL_API_KEY: key, DATABASE_URL: databaseUrl, FLYWHEEL_LOG_LEVEL: "warn", FLYWHEEL_JOB_LEASE_MS: "1000", FLYWHEEL_JOB_POLL_MS: "100" };
    let server = await startServer(["--data-dir", dataDir], { ...env, FLYWHEEL_TRAIN_STEP_DELAY_MS: "60000" });
    try {
      const model = (await call(server, "POST", "/v1/preview/models", { project: "p", name: "m", base_model: "test/base" })).json;
      const killed = (await call(server, "POST", "/v1/preview/training-jobs", { model_id: model.id, trajectory_groups: flatGroups() })).json.id;
      const next = (await call(server, "POST", "/v1/preview/training-jobs", { model_id: model.id, trajectory_groups: flatGroups() })).json.id;
      await until(
        () => call(server, "GET", `/v1/preview/training-jobs/${killed}/events`),
        (res) => res.json.data.length === 1,
        "training_started",
      );

      server.child.kill("SIGKILL");
      await server.exited;
      server = await startServer(["--data-dir", dataDir], env);

      const failed = await until(
        () => call(server, "GET", `/v1/preview/training-jobs/${killed}`),
        (res) => res.json.status !== "running",
        "the killed job to end",
      );
      expect(failed.json).toMatchObject({ status: "failed", step: null });
      expect(failed.json.error_message).toMatch(/lease/);
      const events = (await call(server, "GET", `/v1/preview/training-jobs/${killed}/events`)).json.data;
      expect(events.map((e: { type: string }) => e.type)).toEqual(["training_started", "training_failed"]);
      expect(new Set(events.map((e: { id: string }) => e.id)).size).toBe(2);

      const done = await until(
        () => call(server, "GET", `/v1/preview/training-jobs/${next}`),
        (res) => res.json.status === "succeeded",
        "the next job",
      );
      expect(done.json.step).toBe(1);
      const checkpoints = (await call(server, "GET", `/v1/preview/models/${model.id}/checkpoints`)).json.data;
      expect(checkpoints.map((c: { step: number }) => c.step)).toEqual([1]);
    } finally {
      server.child.kill("SIGKILL");
      await server.exited;
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
