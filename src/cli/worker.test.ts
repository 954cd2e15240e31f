import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../config.js";
import { listJobEvents } from "../store/job-events.js";
import { writeBaseModelDir } from "../testing/app.js";
import { startServer } from "../testing/cli.js";
import { makeTempDir, openTestStore, testDialects } from "../testing/stores.js";
import { tinyModel } from "../testing/models.js";
import { flatGroups } from "../testing/training.js";

const key = "worker-test-key-0123456789";

/** Starts `flywheel worker` and resolves once it reports its id. */
function startWorker(dataDir: string, env: Record<string, string>): Promise<{ child: ChildProcess; id: string; exited: Promise<number | string | null> }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(projectRoot, "src", "cli", "main.ts"), "worker", "--data-dir", dataDir], {
    env: { ...process.env, ...env },
    cwd: projectRoot,
  });
  const exited = new Promise<number | string | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  let stdout = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${stdout}`)), 30_000);
    child.stderr?.on("data", (chunk) => (stdout += chunk));
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const match = /^Flywheel worker (\S+)/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ child, id: match[1]!, exited });
      }
    });
  });
}

/**
 * Issue 5, item 10: `flywheel worker` processes run jobs against the same database and data
 * directory as a `serve --no-worker`; each job runs exactly once. PostgreSQL is the scale path;
 * SQLite in WAL mode shares its file between processes of one machine the same way.
 */
describe.each(testDialects)("flywheel worker processes on %s", (dialect) => {
  it("two of them run every job exactly once, one model's jobs in order", async () => {
    const store = await openTestStore(dialect, makeTempDir());
    const dataDir = store.dataDir;
    writeBaseModelDir(path.join(dataDir, "models"), "test/base");
    const env: Record<string, string> = { FLYWHEEL_API_KEY: key, FLYWHEEL_LOG_LEVEL: "warn", ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) };
    const server = await startServer(["--data-dir", dataDir, "--no-worker"], env);
    const workers: Awaited<ReturnType<typeof startWorker>>[] = [];
    try {
      const post = async (url: string, body: unknown) => {
        const res = await fetch(`${server.url}${url}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
        return (await res.json()) as { id: string };
      };
      const jobsByModel = new Map<string, string[]>();
      for (const name of ["a", "b", "c", "d"]) {
        const model = await post("/v1/preview/models", { project: "p", name, base_model: "test/base" });
        const jobs: string[] = [];
        for (let i = 0; i < 3; i++) jobs.push((await post("/v1/preview/training-jobs", { model_id: model.id, trajectory_groups: flatGroups() })).id);
        jobsByModel.set(model.id, jobs);
      }
      // The server runs no jobs itself.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await store.db.selectFrom("training_jobs").select("id").where("status", "!=", "queued").execute()).toEqual([]);

      const workerEnv = { ...env, FLYWHEEL_WORKER_CONCURRENCY: "2", FLYWHEEL_JOB_POLL_MS: "50", FLYWHEEL_TRAIN_STEP_DELAY_MS: "300" };
      workers.push(...(await Promise.all([startWorker(dataDir, workerEnv), startWorker(dataDir, workerEnv)])));

      const deadline = Date.now() + 60_000;
      while ((await store.db.selectFrom("training_jobs").select("id").where("status", "in", ["queued", "running"]).execute()).length > 0) {
        if (Date.now() > deadline) throw new Error("jobs did not finish");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const rows = await store.db.selectFrom("training_jobs").selectAll().execute();
      expect(rows.map((row) => [row.status, row.attempts])).toEqual(rows.map(() => ["succeeded", 1]));
      for (const row of rows) {
        expect((await listJobEvents(store.db, row.id)).map((event) => [event.seq, event.type])).toEqual([
          [1, "training_started"],
          [2, "training_ended"],
        ]);
      }
      for (const [modelId, jobs] of jobsByModel) {
        const steps = jobs.map((id) => rows.find((row) => row.id === id)!.result_step);
        expect(steps, modelId).toEqual([1, 2, 3]);
        const checkpoints = await store.db.selectFrom("checkpoints").select("step").where("model_id", "=", modelId).orderBy("step").execute();
        expect(checkpoints.map((c) => c.step)).toEqual([1, 2, 3]);
      }
      // Both workers took part.
      expect(new Set(rows.map((row) => row.last_worker))).toEqual(new Set(workers.map((worker) => worker.id)));

      for (const worker of workers) worker.child.kill("SIGTERM");
      expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0]);
    } finally {
      for (const worker of workers) worker.child.kill("SIGKILL");
      server.child.kill("SIGKILL");
      await server.exited;
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("trains for real in a trainer thread of the worker process", async () => {
    const store = await openTestStore(dialect, makeTempDir());
    const dataDir = store.dataDir;
    fs.cpSync(tinyModel("qwen2").dir, path.join(dataDir, "models", "tiny", "qwen2"), { recursive: true });
    const env: Record<string, string> = { FLYWHEEL_API_KEY: key, FLYWHEEL_LOG_LEVEL: "warn", ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) };
    const server = await startServer(["--data-dir", dataDir, "--no-worker"], env);
    let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
    try {
      const post = async (url: string, body: unknown) => {
        const res = await fetch(`${server.url}${url}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
        return (await res.json()) as { id: string; url: string };
      };
      const model = await post("/v1/preview/models", { project: "p", name: "real", base_model: "tiny/qwen2" });
      const row = JSON.stringify({
        messages: [
          { role: "user", content: "ping" },
          { role: "assistant", content: "pong" },
        ],
      });
      const artifact = await post("/v1/preview/artifacts", { project: "p", name: "data", files: [{ name: "train.jsonl", text: `${row}\n${row}\n${row}\n${row}\n` }] });
      const job = await post("/v1/preview/sft-training-jobs", { model_id: model.id, training_data_url: artifact.url, config: { learning_rate: 1e-2 } });
      worker = await startWorker(dataDir, { ...env, FLYWHEEL_JOB_POLL_MS: "50" });
      const deadline = Date.now() + 60_000;
      let status = "queued";
      while (status === "queued" || status === "running") {
        if (Date.now() > deadline) throw new Error("the job did not finish");
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await store.db.selectFrom("training_jobs").select("status").where("id", "=", job.id).executeTakeFirstOrThrow()).status;
      }
      expect(status).toBe("succeeded");
      const events = await listJobEvents(store.db, job.id);
      expect(events.map((event) => event.type)).toEqual(["training_started", "gradient_step", "gradient_step", "training_ended"]);
      const checkpoint = await store.db.selectFrom("checkpoints").select("files").where("model_id", "=", model.id).executeTakeFirstOrThrow();
      expect(Object.keys(JSON.parse(checkpoint.files!)).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]);
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
    } finally {
      worker?.child.kill("SIGKILL");
      server.child.kill("SIGKILL");
      await server.exited;
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
