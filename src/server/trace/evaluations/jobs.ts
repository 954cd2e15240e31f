import type { FastifyBaseLogger } from "fastify";

/**
 * Work the trace API runs after answering (server-side evaluations and scorings). Closing aborts
 * what is still running and waits for it, so each job can record that it was interrupted before
 * the database closes.
 */
export class BackgroundJobs {
  private readonly controller = new AbortController();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly log: FastifyBaseLogger) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  start(name: string, task: (signal: AbortSignal) => Promise<void>): void {
    const job = task(this.controller.signal)
      .catch((error: unknown) => this.log.error({ err: error, job: name }, "background job failed"))
      .finally(() => this.running.delete(job));
    this.running.add(job);
  }

  async close(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled([...this.running]);
  }
}
