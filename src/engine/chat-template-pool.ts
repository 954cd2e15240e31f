import type { Worker } from "node:worker_threads";
import { ChatTemplateError, type ChatTemplateErrorKind, type ChatTemplateRequest } from "./chat-template.js";
import { spawnModuleThread } from "./thread-spawn.js";

/** Ids copied per turn of the event loop: a few milliseconds' work even on a busy machine. */
const IDS_PER_TURN = 32_768;

/**
 * Ids arrive as one transferred buffer (nothing copied across threads); the plain array the rest
 * of the server takes is filled a slice per turn of the event loop, so a prompt of a million
 * tokens never holds it for long.
 */
async function idsToArray(ids: Uint32Array): Promise<number[]> {
  const out = new Array<number>(ids.length);
  for (let start = 0; start < ids.length; start += IDS_PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const end = Math.min(ids.length, start + IDS_PER_TURN);
    for (let i = start; i < end; i++) out[i] = ids[i]!;
  }
  return out;
}

/** What a template may cost before it is stopped with a `limit` ChatTemplateError. */
export interface ChatTemplateLimits {
  /** Longest a render may take, from when a thread starts it. */
  timeoutMs: number;
  /** Most characters a render may produce. */
  maxOutputChars: number;
  /** Heap of a rendering thread, in MiB: a template that builds more is stopped. */
  memoryMb: number;
  /** Rendering threads (renders run one at a time on each). */
  threads: number;
}

/** Tokenize the render on the same thread, with the tokenizer of this checkpoint directory. */
export interface PromptTokenization {
  tokenizerDir: string;
  addSpecialTokens: boolean;
}

export interface TemplateJob {
  id: number;
  template: string;
  request: ChatTemplateRequest;
  maxOutputChars: number;
  tokenize?: PromptTokenization;
}

/** A render, and its token ids when the job asked for them. */
export interface RenderedTemplate {
  text: string;
  tokenIds?: number[];
}

export type TemplateReply = { id: number; text: string; tokenIds?: Uint32Array } | { id: number; error: { kind: ChatTemplateErrorKind; message: string } };

interface Pending {
  job: TemplateJob;
  resolve: (rendered: RenderedTemplate) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  running: (Pending & { timer: NodeJS.Timeout }) | undefined;
}

/**
 * Renders chat templates on worker threads, and tokenizes the render there when asked, so neither a
 * template that loops or grows without end nor a long prompt ever blocks the event loop: past the
 * time limit or the memory limit its thread is terminated (and a fresh one started) and the job
 * fails with a `limit` ChatTemplateError; an oversized output fails the same way. Jobs wait in
 * order for a free thread. Threads start on first use.
 */
export class ChatTemplatePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(readonly limits: ChatTemplateLimits) {}

  /** Renders `template`; with `tokenize`, also returns the render's token ids. */
  render(template: string, request: ChatTemplateRequest, tokenize?: PromptTokenization): Promise<RenderedTemplate> {
    if (this.closed) return Promise.reject(new Error("the chat template pool is closed"));
    return new Promise((resolve, reject) => {
      const job: TemplateJob = { id: this.nextId++, template, request, maxOutputChars: this.limits.maxOutputChars };
      if (tokenize) job.tokenize = tokenize;
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error("the chat template pool is closed"));
    await Promise.all(this.slots.splice(0).map((slot) => this.stop(slot, new Error("the chat template pool is closed"))));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => candidate.ready && !candidate.running);
      if (!slot) {
        if (this.slots.length < this.limits.threads) this.slots.push(this.spawn());
        return;
      }
      const pending = this.queue.shift()!;
      const work = pending.job.tokenize ? "The prompt did not finish rendering and tokenizing" : "The chat template did not finish rendering";
      const timer = setTimeout(() => {
        void this.replace(slot, new ChatTemplateError("limit", `${work} within ${this.limits.timeoutMs} ms (FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS)`));
      }, this.limits.timeoutMs);
      slot.running = { ...pending, timer };
      slot.worker.postMessage(pending.job);
    }
  }

  private spawn(): Slot {
    const worker = spawnModuleThread(import.meta.url, "./chat-template-thread", {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb, maxYoungGenerationSizeMb: Math.min(64, this.limits.memoryMb) },
    });
    worker.unref();
    const slot: Slot = { worker, ready: false, running: undefined };
    worker.on("message", (message: TemplateReply | { ready: true }) => {
      if ("ready" in message) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const running = slot.running;
      if (!running || running.job.id !== message.id) return;
      clearTimeout(running.timer);
      slot.running = undefined;
      if ("text" in message) {
        if (message.tokenIds) void idsToArray(message.tokenIds).then((tokenIds) => running.resolve({ text: message.text, tokenIds }));
        else running.resolve({ text: message.text });
      } else running.reject(new ChatTemplateError(message.error.kind, message.error.message));
      this.dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const reason =
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new ChatTemplateError("limit", `The chat template used more than this server's ${this.limits.memoryMb} MiB while rendering`)
          : new ChatTemplateError("render", `The chat template could not be rendered: ${error.message}`);
      void this.replace(slot, reason);
    });
    worker.on("exit", () => {
      if (this.slots.includes(slot)) void this.replace(slot, new ChatTemplateError("render", "The chat template's rendering thread stopped"));
    });
    return slot;
  }

  /** Fails the slot's job with `reason`, stops its thread and lets a fresh one take its place. */
  private async replace(slot: Slot, reason: Error): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    await this.stop(slot, reason);
    this.dispatch();
  }

  private async stop(slot: Slot, reason: Error): Promise<void> {
    const running = slot.running;
    slot.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.reject(reason);
    }
    await slot.worker.terminate();
  }
}
