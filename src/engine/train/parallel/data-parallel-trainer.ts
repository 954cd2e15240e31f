import type { Worker } from "node:worker_threads";
import { spawnModuleThread } from "../../thread-spawn.js";
import type { SftStepMeasurements } from "../step-metrics.js";
import type { SftSequence } from "../sft-packing.js";
import type { NamedParameter } from "../transformer/model-gradients.js";
import type { FromReplica, ToReplica } from "./protocol.js";

/** One replica thread and the replies it owes, in order. */
class Replica {
  private readonly waiting: { resolve(message: FromReplica): void; reject(error: Error): void }[] = [];
  private failure: Error | null = null;

  constructor(readonly worker: Worker) {
    worker.on("message", (message: FromReplica) => {
      const next = this.waiting.shift();
      if (!next) return;
      if (message.type === "failed" || message.type === "load-failed") next.reject(new Error(`a training replica failed: ${message.message}`));
      else next.resolve(message);
    });
    const fail = (error: Error) => {
      this.failure = error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`a training replica exited (code ${code})`)));
  }

  /** The next reply (replies come in the order of the requests). */
  reply<T extends FromReplica["type"]>(type: T): Promise<Extract<FromReplica, { type: T }>> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({
        resolve: (message) => (message.type === type ? resolve(message as Extract<FromReplica, { type: T }>) : reject(new Error(`a training replica answered ${message.type}, expected ${type}`))),
        reject,
      });
    });
  }

  send(message: ToReplica): void {
    this.worker.postMessage(message);
  }
}

/**
 * Full-parameter SFT on several threads (data parallelism): every replica holds the same weights
 * and optimizer state; a step splits the batch's sequences among them by tokens, adds their
 * gradients in replica order, and sends the sum back so each replica takes the same AdamW step.
 * The result equals a one-thread `Trainer` step up to the float rounding of that sum, and a given
 * number of replicas gives bit-identical weights run after run.
 */
export class DataParallelTrainer {
  private constructor(
    private readonly replicas: Replica[],
    readonly parameterCount: number,
  ) {}

  /** Starts `replicas` threads, each loading the checkpoint in `dir`. */
  static async start(dir: string, replicas: number): Promise<DataParallelTrainer> {
    if (!Number.isInteger(replicas) || replicas < 1) throw new RangeError(`replicas must be a positive integer, got ${replicas}`);
    const started = Array.from({ length: replicas }, () => new Replica(spawnModuleThread(import.meta.url, "./replica-worker", { workerData: { dir } })));
    try {
      const ready = await Promise.all(started.map((replica) => replica.reply("ready")));
      return new DataParallelTrainer(started, ready[0]!.parameterCount);
    } catch (error) {
      await Promise.all(started.map((replica) => replica.worker.terminate()));
      throw error;
    }
  }

  get replicaCount(): number {
    return this.replicas.length;
  }

  /** One optimizer step of the token-mean SFT loss over the sequences (`Trainer.sftSequencesStep`). */
  async sftSequencesStep(batch: { sequences: readonly SftSequence[]; learningRate: number }): Promise<SftStepMeasurements> {
    const started = performance.now();
    const numTrainableTokens = batch.sequences.reduce((sum, { mask }) => sum + mask.reduce((count, bit) => count + bit, 0), 0);
    const shares = splitByTokens(batch.sequences, this.replicas.length);
    const parts = await Promise.all(
      this.replicas.map((replica, i) => {
        const reply = replica.reply("gradients");
        replica.send({ type: "gradients", sequences: shares[i]!, numTrainableTokens });
        return reply;
      }),
    );
    const gradients = parts[0]!.gradients;
    for (const part of parts.slice(1)) gradients.forEach((tensor, t) => part.gradients[t]!.forEach((value, j) => (tensor[j] += value)));
    const stepped = await Promise.all(
      this.replicas.map((replica) => {
        const reply = replica.reply("stepped");
        replica.send({ type: "step", gradients, learningRate: batch.learningRate });
        return reply;
      }),
    );
    return {
      loss: parts.reduce((sum, part) => sum + part.loss, 0),
      learningRate: batch.learningRate,
      gradNorm: stepped[0]!.gradNorm,
      numTrajectories: batch.sequences.length,
      numTokens: batch.sequences.reduce((sum, { sequence }) => sum + sequence.length, 0),
      numTrainableTokens,
      seconds: (performance.now() - started) / 1000,
    };
  }

  /** The trained weights (from the first replica; all hold the same). */
  async parameters(): Promise<NamedParameter[]> {
    const replica = this.replicas[0]!;
    const reply = replica.reply("parameters");
    replica.send({ type: "parameters" });
    return (await reply).parameters;
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.worker.terminate()));
  }
}

/**
 * Deals sequences to `parts` shares, longest first, each to the share with the fewest tokens so
 * far (ties to the lower index): balanced work, and the same split for the same batch.
 */
export function splitByTokens<T extends { sequence: { length: number } }>(sequences: readonly T[], parts: number): T[][] {
  const shares: T[][] = Array.from({ length: parts }, () => []);
  const loads = new Array<number>(parts).fill(0);
  const order = sequences.map((_, i) => i).sort((a, b) => sequences[b]!.sequence.length - sequences[a]!.sequence.length || a - b);
  for (const index of order) {
    let target = 0;
    for (let i = 1; i < parts; i++) if (loads[i]! < loads[target]!) target = i;
    shares[target]!.push(sequences[index]!);
    loads[target]! += sequences[index]!.sequence.length;
  }
  return shares;
}
