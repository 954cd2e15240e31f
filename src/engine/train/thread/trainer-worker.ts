import { parentPort, workerData } from "node:worker_threads";
import { type LoadedModel, loadModel } from "../../model/load.js";
import { runTrainingJob } from "../job/run-training-job.js";
import type { TrainingJobSpec } from "../job/types.js";
import { selectTrainableKernels } from "../kernels/select.js";
import type { FromTrainerThread, ToTrainerThread, TrainerThreadInit } from "./protocol.js";

/**
 * A trainer thread's entry: loads its base model on the first job and keeps it for the next ones,
 * runs queued jobs one at a time, and posts every update as it happens. Between two steps it lets
 * its event loop turn, so a cancellation arriving meanwhile stops the job before its next step.
 */
const init = workerData as TrainerThreadInit;
const port = parentPort!;
const queue: { runId: number; spec: TrainingJobSpec }[] = [];
const cancelled = new Set<number>();
let model: LoadedModel | undefined;
let pumping = false;

const post = (message: FromTrainerThread) => port.postMessage(message);

port.on("message", (message: ToTrainerThread) => {
  if (message.type === "run") {
    queue.push({ runId: message.runId, spec: message.spec });
    void pump();
  } else cancelled.add(message.runId);
});

async function pump(): Promise<void> {
  if (pumping) return;
  pumping = true;
  try {
    for (let job = queue.shift(); job; job = queue.shift()) await run(job.runId, job.spec);
  } finally {
    pumping = false;
  }
}

async function run(runId: number, spec: TrainingJobSpec): Promise<void> {
  try {
    if (cancelled.has(runId)) return post({ type: "cancelled", runId });
    model ??= loadModel(init.modelDir, { kernels: selectTrainableKernels() });
    const steps = runTrainingJob(model, spec);
    for (;;) {
      await nextTurn();
      if (cancelled.has(runId)) return post({ type: "cancelled", runId });
      const { value, done } = steps.next();
      if (done) return;
      post({ type: "update", runId, update: value });
    }
  } catch (error) {
    post({ type: "failed", runId, message: error instanceof Error ? error.message : String(error) });
  } finally {
    cancelled.delete(runId);
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
