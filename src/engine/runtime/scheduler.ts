import type { KvCache } from "../model/kv-cache.js";
import type { LogitsSelection } from "../model/types.js";
import type { SchedulerOptions } from "./options.js";
import type { EngineRequest } from "./request.js";
import type { Sequence } from "./sequence.js";
import { compareKeys, WaitQueue } from "./wait-queue.js";

/** One sequence's part of the next forward pass. */
export interface StepItem {
  request: EngineRequest;
  sequence: Sequence;
  /** First position to run (= the tokens already computed). */
  start: number;
  count: number;
  logits: LogitsSelection;
}

/**
 * Decides what each forward pass runs (continuous batching). Requests wait in a `WaitQueue` and are
 * admitted while the running sequences stay within `maxRunningSequences` and their KV within
 * `kvCacheBytes` (a request that does not fit waits; one alone always runs). Each step gives every
 * decoding sequence its next token first, then spends what is left of `maxTokensPerStep` on
 * prompt chunks (chunked prefill), oldest request first. When the running sequences' KV would grow
 * past the budget, the request that would be admitted last (latest, or lowest priority) is
 * preempted: its caches are dropped and it waits again at its old place, to recompute later.
 */
export class Scheduler {
  readonly waiting: WaitQueue<EngineRequest>;
  /** In admission order. */
  readonly running: EngineRequest[] = [];
  preemptions = 0;

  constructor(
    private readonly options: SchedulerOptions,
    /** KV bytes one position of one sequence takes. */
    private readonly bytesPerPosition: number,
    private readonly createCache: (capacity: number) => KvCache,
  ) {
    this.waiting = new WaitQueue(options.priorityScheduling);
  }

  /** Sequences the running requests hold now. */
  get runningSequences(): number {
    return this.running.reduce((sum, request) => sum + request.sequences().length, 0);
  }

  /** KV bytes the running sequences hold now. */
  get kvBytes(): number {
    let bytes = 0;
    for (const request of this.running) for (const sequence of request.sequences()) bytes += sequence.cache?.byteSize ?? 0;
    return bytes;
  }

  /** Takes a request out of the engine, wherever it is. */
  remove(request: EngineRequest): void {
    if (this.waiting.remove(request)) return;
    const index = this.running.indexOf(request);
    if (index >= 0) this.running.splice(index, 1);
  }

  /** The work of the next forward pass (empty when there is none). */
  plan(): StepItem[] {
    let items = this.planRunning();
    let preempted = false;
    while (this.running.length > 1 && this.projectedBytes(items) > this.options.kvCacheBytes) {
      this.preempt(this.lastInLine());
      preempted = true;
      items = this.planRunning();
    }
    // Admitting in the step that had to preempt would only trade one request for another.
    if (!preempted) this.admit(items);
    return items;
  }

  private planRunning(): StepItem[] {
    const items: StepItem[] = [];
    let budget = this.options.maxTokensPerStep;
    // Decoding sequences first (one token each), so long prompts never stall running streams.
    for (const request of this.running) {
      for (const sequence of request.sequences()) {
        if (budget > 0 && sequence.pending === 1) {
          items.push(item(request, sequence, 1));
          budget--;
        }
      }
    }
    for (const request of this.running) budget = scheduleChunks(request, items, budget);
    return items;
  }

  private admit(items: StepItem[]): void {
    let budget = this.options.maxTokensPerStep - items.reduce((sum, entry) => sum + entry.count, 0);
    let projected = this.projectedBytes(items);
    // A request counts with all its choices or beams from the start: its prompt forks into them.
    let sequences = this.running.reduce((sum, request) => sum + request.width, 0);
    for (let next = this.waiting.peek(); next && budget > 0; next = this.waiting.peek()) {
      const bytes = next.admissionPositions() * this.bytesPerPosition;
      if (this.running.length > 0) {
        if (sequences + next.width > this.options.maxRunningSequences) break;
        if (projected + bytes > this.options.kvCacheBytes) break;
      }
      this.waiting.shift();
      this.running.push(next);
      next.allocate(this.createCache);
      budget = scheduleChunks(next, items, budget);
      projected += bytes;
      sequences += next.width;
    }
  }

  /** KV bytes of the running sequences once this step's tokens are in their caches. */
  private projectedBytes(items: StepItem[]): number {
    const growth = new Map<Sequence, number>(items.map((entry) => [entry.sequence, entry.count]));
    let bytes = 0;
    for (const request of this.running) {
      for (const sequence of request.sequences()) {
        if (sequence.cache) bytes += sequence.cache.byteSizeFor(sequence.computed + (growth.get(sequence) ?? 0));
      }
    }
    return bytes;
  }

  /** The running request that would have been admitted last. */
  private lastInLine(): EngineRequest {
    return this.running.reduce((worst, request) => (compareKeys(request, worst, this.options.priorityScheduling) > 0 ? request : worst));
  }

  private preempt(request: EngineRequest): void {
    request.preempt();
    this.running.splice(this.running.indexOf(request), 1);
    this.waiting.insert(request);
    this.preemptions++;
  }
}

function item(request: EngineRequest, sequence: Sequence, count: number): StepItem {
  const start = sequence.computed;
  return { request, sequence, start, count, logits: request.logitsFor(sequence, start, count) };
}

/** Adds the request's prompt (or recompute) chunks that fit in `budget`; returns what is left. */
function scheduleChunks(request: EngineRequest, items: StepItem[], budget: number): number {
  for (const sequence of request.sequences()) {
    if (budget === 0) break;
    if (sequence.pending > 1 || (sequence.pending === 1 && !items.some((entry) => entry.sequence === sequence))) {
      const count = Math.min(sequence.pending, budget);
      items.push(item(request, sequence, count));
      budget -= count;
    }
  }
  return budget;
}
