/**
 * Long loops over rows (streamed query results) run as chains of promises that may never wait for
 * I/O: on SQLite every query answers synchronously, and a socket that keeps up never asks the
 * writer to wait. Such a chain holds the event loop until it ends, so /health and every other
 * request would wait. `TurnBudget.spend()` hands the loop back for a turn once the caller has held
 * it for `budgetMs`.
 */
export class TurnBudget {
  private since = performance.now();

  constructor(private readonly budgetMs = 10) {}

  /** Resolves at once while within the budget; otherwise after one turn of the event loop. */
  async spend(): Promise<void> {
    if (performance.now() - this.since < this.budgetMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
