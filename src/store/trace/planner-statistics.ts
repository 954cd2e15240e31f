import { sql } from "kysely";
import type { Store } from "../db.js";

/**
 * Keeps SQLite's planner statistics for the trace tables current as they grow. Without them SQLite
 * guesses, and may walk a whole project in start order to find the few calls of a list of traces;
 * with them it uses the trace, parent or op index. ANALYZE samples (analysis_limit), so a refresh
 * takes milliseconds. It runs once per process, then whenever the writes since the last refresh
 * exceed a threshold that grows fourfold (1k, 4k, 16k, ... calls, then every million).
 * PostgreSQL's autovacuum keeps its own statistics.
 */
export class PlannerStatistics {
  private refreshed = false;
  private written = 0;
  private threshold = 1000;

  constructor(private readonly store: Store) {}

  async beforeRead(): Promise<void> {
    if (!this.refreshed) await this.refresh();
  }

  async afterWrite(calls: number): Promise<void> {
    this.written += calls;
    if (!this.refreshed || this.written >= this.threshold) {
      this.threshold = Math.min(this.threshold * 4, 1_000_000);
      await this.refresh();
    }
  }

  private async refresh(): Promise<void> {
    this.refreshed = true;
    this.written = 0;
    if (this.store.dialect !== "sqlite") return;
    await sql`PRAGMA analysis_limit = 1000`.execute(this.store.db);
    await sql`ANALYZE trace_calls`.execute(this.store.db);
  }
}
