import type { Worker } from "node:worker_threads";
import { spawnModuleThread } from "../thread-spawn.js";
import { EngineError, fromWireError } from "./errors.js";
import type { RequestUpdate } from "./engine-core.js";
import type { EngineCall, EngineThreadInit, FromEngineThread, ToEngineThread } from "./protocol.js";

export interface EngineThreadHandlers {
  updates(updates: RequestUpdate[]): void;
  /** The thread stopped without being closed (a crash, or `terminate`). */
  stopped(error: EngineError): void;
}

/** How long a closing thread may take to abort its requests before it is terminated. */
const CLOSE_GRACE_MS = 10_000;

/**
 * One engine worker thread, seen from the main thread: started with the model's directory,
 * `ready` once the model is loaded, then fed messages; calls (stats, constraint checks) get
 * replies. The thread keeps the process alive only while `busy` says so.
 */
export class EngineThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextCallId = 0;
  private closing: Promise<void> | null = null;
  private stopReason: string | null = null;
  private exited = false;
  private readonly exit: Promise<void>;

  constructor(
    private readonly init: EngineThreadInit,
    handlers: EngineThreadHandlers,
  ) {
    this.worker = spawnModuleThread(import.meta.url, "./engine-worker", { workerData: init });
    let settleReady: { resolve(): void; reject(error: Error): void };
    this.ready = new Promise((resolve, reject) => (settleReady = { resolve, reject }));
    // Nobody may be waiting for `ready` when a crash rejects it; the crash is reported through `stopped`.
    this.ready.catch(() => undefined);
    let crash: Error | undefined;
    this.worker.on("message", (message: FromEngineThread) => {
      if (message.type === "ready") settleReady.resolve();
      else if (message.type === "load-failed") settleReady.reject(fromWireError(message.error));
      else if (message.type === "updates") handlers.updates(message.updates);
      else if (message.type === "reply") this.reply(message);
    });
    this.worker.on("error", (error) => (crash = error));
    this.exit = new Promise((resolve) => {
      this.worker.once("exit", (code) => {
        this.exited = true;
        const reason = this.stopReason ?? (crash ? `it crashed: ${crash.message}` : `it exited with code ${code}`);
        const error = new EngineError("worker_failed", `The engine thread of model '${init.modelId}' stopped: ${reason}`);
        settleReady.reject(error);
        for (const call of this.calls.values()) call.reject(error);
        this.calls.clear();
        if (!this.closing) handlers.stopped(error);
        resolve();
      });
    });
  }

  post(message: ToEngineThread): void {
    if (!this.exited) this.worker.postMessage(message);
  }

  call<T>(call: EngineCall): Promise<T> {
    if (this.exited) return Promise.reject(new EngineError("worker_failed", `The engine thread of model '${this.init.modelId}' is not running`));
    const callId = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(callId, { resolve: resolve as (value: unknown) => void, reject });
      this.post({ type: "call", callId, call });
    });
  }

  /** Whether the thread keeps the process alive (while it has work, or is loading). */
  set busy(busy: boolean) {
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  /** Asks the thread to abort its requests and stop; terminates it if it takes too long. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.exited) return;
      this.post({ type: "close" });
      const timer = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
      await this.exit;
      clearTimeout(timer);
    })();
    return this.closing;
  }

  /** Stops the thread at once, as if it crashed: its requests fail. */
  async terminate(reason: string): Promise<void> {
    this.stopReason = reason;
    await this.worker.terminate();
    await this.exit;
  }

  private reply(message: Extract<FromEngineThread, { type: "reply" }>): void {
    const call = this.calls.get(message.callId);
    if (!call) return;
    this.calls.delete(message.callId);
    if (message.ok) call.resolve(message.value);
    else call.reject(fromWireError(message.error));
  }
}
