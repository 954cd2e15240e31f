import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testKernelBackends } from "../../../testing/kernel-backends.js";
import { loadTinyModel, tinyModel } from "../../../testing/models.js";
import { runTrainingJob } from "../job/run-training-job.js";
import type { TrainerUpdate, TrainingJobSpec } from "../job/types.js";
import { resolveSftConfig } from "../sft-config.js";
import { TrainerThreads } from "./trainer-threads.js";

const conversation = {
  messages: [
    { role: "user", content: "ping" },
    { role: "assistant", content: "pong" },
  ],
};

function sftSpec(jobId: string, batches: number): TrainingJobSpec {
  const rows = Array.from({ length: 2 * batches }, () => conversation);
  return { jobId, from: null, newAdapter: { seed: 1, baseModelNameOrPath: "tiny" }, work: { kind: "sft", rows, fileName: "train.jsonl", config: resolveSftConfig({ learning_rate: 1e-2 }, rows.length) } };
}

async function collect(updates: AsyncIterable<TrainerUpdate>): Promise<TrainerUpdate[]> {
  const out: TrainerUpdate[] = [];
  for await (const update of updates) out.push(update);
  return out;
}

describe("TrainerThreads", () => {
  const threads = new TrainerThreads({ idleMs: 60_000 });
  const dir = tinyModel("qwen2").dir;
  afterAll(() => threads.close());

  it("runs a job in a thread with exactly the numbers of an in-process run", async () => {
    const spec = sftSpec("same", 3);
    const threaded = await collect(threads.run(dir, spec, new AbortController().signal));
    // The thread trains on the native kernels when they are built, as the direct run here does.
    const direct = [...runTrainingJob(loadTinyModel("qwen2", {}, testKernelBackends().at(-1)), spec)];
    // Timings differ; bytes arrive as plain Uint8Arrays (a Buffer does not survive the thread boundary as one).
    const comparable = (updates: TrainerUpdate[]) =>
      updates.map((update) => {
        if (update.type === "gradient_step") return { ...update, metrics: { ...update.metrics, tokens_per_second: 0 } };
        if (update.type === "finished" && update.adapter) return { ...update, adapter: Object.fromEntries(Object.entries(update.adapter).map(([name, bytes]) => [name, new Uint8Array(bytes)])) };
        return update;
      });
    expect(comparable(threaded)).toEqual(comparable(direct));
    expect(threaded.at(-1)).toMatchObject({ type: "finished", adapter: { "adapter_config.json": expect.any(Uint8Array) } });
    expect(threads.modelDirs).toEqual([dir]);
  });

  it("stops a job when it is cancelled, and the thread goes on with the next one", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const cancelled = (async () => {
      for await (const update of threads.run(dir, sftSpec("long", 200), controller.signal)) {
        seen.push(update.type);
        if (update.type === "gradient_step") controller.abort(new Error("cancelled by the test"));
      }
    })();
    // Queued behind the long job on the same thread: it runs once the long one has stopped.
    const next = collect(threads.run(dir, sftSpec("after", 1), new AbortController().signal));
    await expect(cancelled).rejects.toThrow("cancelled by the test");
    expect(seen).toEqual(["started", "gradient_step"]);
    expect((await next).map((update) => update.type)).toEqual(["started", "gradient_step", "finished"]);
  });

  it("cancels a job whose reader stops reading", async () => {
    for await (const update of threads.run(dir, sftSpec("abandoned", 200), new AbortController().signal)) if (update.type === "gradient_step") break;
    expect((await collect(threads.run(dir, sftSpec("then", 1), new AbortController().signal))).at(-1)?.type).toBe("finished");
  });

  it("fails the jobs of a thread that stops", async () => {
    const other = new TrainerThreads({ idleMs: 60_000 });
    const updates = other.run(dir, sftSpec("stopped", 200), new AbortController().signal);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const update of updates) {
        seen.push(update.type);
        if (update.type === "gradient_step") void other.close();
      }
    })();
    await expect(reading).rejects.toThrow(/the trainer thread of .* stopped: it was closed/);
    expect(seen.slice(0, 2)).toEqual(["started", "gradient_step"]);
    expect(() => other.run(dir, sftSpec("late", 1), new AbortController().signal)).toThrow(/closed/);
  });

  it("fails a job on a model it cannot load with the loader's message, and stops idle threads", async () => {
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-broken-model-"));
    fs.writeFileSync(path.join(broken, "config.json"), JSON.stringify({ model_type: "qwen2" }));
    const quick = new TrainerThreads({ idleMs: 0 });
    try {
      await expect(collect(quick.run(broken, sftSpec("broken", 1), new AbortController().signal))).rejects.toThrow(/config\.json/);
      for (let i = 0; i < 100 && quick.modelDirs.length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(quick.modelDirs).toEqual([]);
    } finally {
      await quick.close();
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });
});
