import type { CompiledQuery } from "kysely";

interface PendingWrite {
  statements: CompiledQuery[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * What a commit reports: nothing when the transaction was on disk when it settled, or a promise
 * that settles once it is (the disk sync runs while the next group commits).
 */
export type Committed = { synced: Promise<void> } | void;

/**
 * Group commit for call writes. Writes that arrive together (requests handled in the same turn of
 * the event loop, or while a commit is running) are committed in one transaction, so concurrent
 * batches share one sync to disk instead of paying one each. Every write is still atomic and applied
 * in arrival order, and its promise settles only after its commit is on disk. When a shared
 * transaction fails, its writes are retried in a transaction each, so only the write at fault fails.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private draining = false;

  /** `commit` runs groups of statements, in order, in one transaction. */
  constructor(private readonly commit: (groups: CompiledQuery[][]) => Promise<Committed>) {}

  write(statements: CompiledQuery[]): Promise<void> {
    if (statements.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ statements, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // Wait for the rest of this turn's requests before committing.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending;
      this.pending = [];
      try {
        settle(group, await this.commit(group.map((write) => write.statements)));
      } catch (error) {
        if (group.length === 1) group[0]!.reject(error);
        else await this.commitEach(group);
      }
    }
    this.draining = false;
  }

  private async commitEach(group: PendingWrite[]): Promise<void> {
    for (const write of group) {
      try {
        settle([write], await this.commit([write.statements]));
      } catch (error) {
        write.reject(error);
      }
    }
  }
}

/** Answers the writers of a committed group once their commit is on disk. */
function settle(group: PendingWrite[], committed: Committed): void {
  if (!committed) {
    for (const write of group) write.resolve();
    return;
  }
  committed.synced.then(
    () => {
      for (const write of group) write.resolve();
    },
    (error: unknown) => {
      for (const write of group) write.reject(error);
    },
  );
}
