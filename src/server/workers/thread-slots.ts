/**
 * At most `limit` tasks at a time; the rest wait their turn in arrival order. It caps the planning
 * threads (`FLYWHEEL_JOB_PLAN_THREADS`): each may grow to FLYWHEEL_JOB_PLAN_MEMORY_MB of heap and
 * takes a core, so a burst of plan requests must not start a thread each.
 */
export class ThreadSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a thread limit must be a positive integer, got ${limit}`);
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `task` once a slot is free, and frees the slot when it settles (either way). */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` never dips below the limit between them.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
