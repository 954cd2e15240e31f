import type { GenerateEvent, GenerateRequest, InferenceEngine, ModelInfo } from "../api.js";
import type { KernelsChoice } from "../kernels/settings.js";
import { loadModelFiles, modelInfo } from "../model/load.js";
import type { StructuredConstraint } from "../structured/types.js";
import type { Tokenizer } from "../tokenizer/types.js";
import type { EngineStats, RequestUpdate } from "./engine-core.js";
import { EngineThread } from "./engine-thread.js";
import { EngineError, fromWireError } from "./errors.js";
import { EventChannel } from "./event-channel.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./options.js";

export interface LocalEngineOptions {
  /** The served model id (`ModelInfo.id`). */
  id: string;
  /** The Hugging Face checkpoint directory. */
  dir: string;
  scheduler?: Partial<SchedulerOptions>;
  /** Kernel backend of the engine thread; unset follows FLYWHEEL_KERNELS. */
  kernels?: KernelsChoice;
}

interface OpenStream {
  channel: EventChannel<GenerateEvent>;
  /** Stops listening to the request's AbortSignal. */
  detach(): void;
}

/**
 * `InferenceEngine` for one model on this machine. The main thread keeps the tokenizer and the
 * model description; the weights and every step of the model live in an engine thread
 * (`engine-worker.ts`), which runs the continuous-batching scheduler. Requests and their events
 * cross as small messages. If the thread dies, its requests fail with an `EngineError` and the next
 * call starts a new thread.
 */
export class LocalEngine implements InferenceEngine {
  readonly info: ModelInfo;
  readonly tokenizer: Tokenizer;
  private readonly init: ConstructorParameters<typeof EngineThread>[0];
  private thread: EngineThread | null = null;
  private starting: Promise<EngineThread> | null = null;
  private readonly streams = new Map<string, OpenStream>();
  private pendingCalls = 0;
  private closed = false;

  private constructor(options: LocalEngineOptions, scheduler: SchedulerOptions) {
    const files = loadModelFiles(options.dir);
    this.info = modelInfo(options.id, files, { priorityScheduling: scheduler.priorityScheduling });
    this.tokenizer = files.tokenizer;
    this.init = { modelId: options.id, dir: options.dir, scheduler, ...(options.kernels ? { kernels: options.kernels } : {}) };
  }

  /** Reads the model's files, starts its engine thread and waits until the weights are loaded. */
  static async start(options: LocalEngineOptions): Promise<LocalEngine> {
    const engine = new LocalEngine(options, resolveSchedulerOptions(options.scheduler));
    try {
      await engine.ensureThread();
    } catch (error) {
      await engine.close();
      throw error;
    }
    return engine;
  }

  generate(request: GenerateRequest): AsyncIterable<GenerateEvent> {
    const { signal, ...wire } = request;
    const { requestId } = wire;
    const channel = new EventChannel<GenerateEvent>(() => this.thread?.post({ type: "cancel", requestId }));
    if (this.closed) {
      channel.fail(new EngineError("closed", `The engine of model '${this.info.id}' is closed`));
      return channel;
    }
    if (this.streams.has(requestId)) {
      channel.fail(new EngineError("invalid_request", `a request with id '${requestId}' is already running`));
      return channel;
    }
    const cancel = () => this.thread?.post({ type: "cancel", requestId });
    signal?.addEventListener("abort", cancel, { once: true });
    this.streams.set(requestId, { channel, detach: () => signal?.removeEventListener("abort", cancel) });
    this.updateBusy();
    void this.ensureThread().then(
      (thread) => {
        if (!this.streams.has(requestId)) return;
        thread.post({ type: "generate", request: wire });
        if (signal?.aborted) cancel();
      },
      (error: unknown) => this.endStream(requestId, error),
    );
    return channel;
  }

  async checkConstraint(constraint: StructuredConstraint): Promise<void> {
    await this.call({ kind: "checkConstraint", constraint });
  }

  /** What the engine thread is doing now (requests, sequences, KV and prefix-cache use). */
  stats(): Promise<EngineStats> {
    return this.call<EngineStats>({ kind: "stats" });
  }

  /**
   * Stops the engine thread at once, as a crash would: running requests fail, and the next call
   * starts a new thread. For a stuck model, and for tests of the failure path.
   */
  async terminateThread(): Promise<void> {
    await this.thread?.terminate("it was terminated");
  }

  /** Aborts every request (their streams end with `abort`) and stops the engine thread. */
  async close(): Promise<void> {
    this.closed = true;
    const thread = this.thread ?? (await this.starting?.catch(() => null));
    await thread?.close();
    this.thread = null;
    for (const requestId of [...this.streams.keys()]) this.endStream(requestId, new EngineError("closed", `The engine of model '${this.info.id}' was closed`));
  }

  private async call<T>(call: Parameters<EngineThread["call"]>[0]): Promise<T> {
    if (this.closed) throw new EngineError("closed", `The engine of model '${this.info.id}' is closed`);
    this.pendingCalls++;
    this.updateBusy();
    try {
      return await (await this.ensureThread()).call<T>(call);
    } finally {
      this.pendingCalls--;
      this.updateBusy();
    }
  }

  private ensureThread(): Promise<EngineThread> {
    if (this.thread) return Promise.resolve(this.thread);
    this.starting ??= (async () => {
      const thread = new EngineThread(this.init, {
        updates: (updates) => this.deliver(updates),
        stopped: (error) => this.stopped(thread, error),
      });
      try {
        await thread.ready;
      } finally {
        this.starting = null;
      }
      if (this.closed) {
        await thread.close();
        throw new EngineError("closed", `The engine of model '${this.info.id}' was closed`);
      }
      this.thread = thread;
      this.updateBusy();
      return thread;
    })();
    return this.starting;
  }

  private deliver(updates: RequestUpdate[]): void {
    for (const update of updates) {
      const stream = this.streams.get(update.requestId);
      if (!stream) continue;
      stream.channel.push(...update.events);
      if (update.end) this.endStream(update.requestId, update.end === true ? undefined : fromWireError(update.end));
    }
  }

  private stopped(thread: EngineThread, error: EngineError): void {
    if (this.thread === thread) this.thread = null;
    for (const requestId of [...this.streams.keys()]) this.endStream(requestId, error);
  }

  private endStream(requestId: string, error?: unknown): void {
    const stream = this.streams.get(requestId);
    if (!stream) return;
    this.streams.delete(requestId);
    stream.detach();
    if (error === undefined) stream.channel.end();
    else stream.channel.fail(error);
    this.updateBusy();
  }

  private updateBusy(): void {
    if (this.thread) this.thread.busy = this.streams.size > 0 || this.pendingCalls > 0;
  }
}
