import fs from "node:fs/promises";
import { CompiledQuery, type Kysely } from "kysely";

/** `PRAGMA synchronous` values. */
const NORMAL = 1;
const FULL = 2;

/**
 * Runs statements in one SQLite transaction without holding the event loop while the disk syncs.
 *
 * With `synchronous=FULL` a WAL commit calls fsync inside the (synchronous) SQLite call, which on
 * slow disks blocks every other request for milliseconds per commit. Here the transaction commits
 * with `synchronous=NORMAL` — its pages are written to the WAL but not yet synced — and then the WAL
 * file is synced on libuv's thread pool; the promise settles only after that, so a write that is
 * acknowledged is on disk exactly as with FULL. A crash before the sync can lose only writes not yet
 * acknowledged, and WAL mode with NORMAL never corrupts the database. Connections configured with
 * less than FULL, or not in WAL mode, just run the transaction.
 */
export class SqliteWalCommit {
  private wal: Promise<fs.FileHandle> | undefined;
  private mode: Promise<{ synchronous: number; wal: boolean }> | undefined;

  constructor(
    private readonly db: Kysely<any>,
    /** The database file; its WAL is `<file>-wal`. */
    private readonly file: string,
  ) {}

  /** Commits, and settles once the commit is on disk. */
  async run(statements: CompiledQuery[]): Promise<void> {
    await (await this.commit(statements)).synced;
  }

  /**
   * Commits, and settles as soon as the transaction is committed (so the next one may start), with
   * a promise that settles once it is on disk.
   */
  async commit(statements: CompiledQuery[]): Promise<{ synced: Promise<void> }> {
    const { synchronous, wal } = await (this.mode ??= this.readMode());
    const deferSync = wal && synchronous >= FULL;
    await this.db.connection().execute(async (connection) => {
      const run = (text: string) => connection.executeQuery(CompiledQuery.raw(text, []));
      if (deferSync) await run(`PRAGMA synchronous = ${NORMAL}`);
      try {
        await run("BEGIN");
        try {
          for (const statement of statements) await connection.executeQuery(statement);
          await run("COMMIT");
        } catch (error) {
          await run("ROLLBACK").catch(() => undefined);
          throw error;
        }
      } finally {
        if (deferSync) await run(`PRAGMA synchronous = ${synchronous}`);
      }
    });
    if (!deferSync) return { synced: Promise.resolve() };
    const synced = this.walFile().then((wal) => wal.sync());
    // Settled by whoever waits on it; never an unhandled rejection here.
    synced.catch(() => undefined);
    return { synced };
  }

  private walFile(): Promise<fs.FileHandle> {
    this.wal ??= fs.open(`${this.file}-wal`, "r+").catch((error: unknown) => {
      this.wal = undefined;
      throw error;
    });
    return this.wal;
  }

  async close(): Promise<void> {
    const wal = this.wal;
    this.wal = undefined;
    if (wal) await (await wal).close();
  }

  private async readMode(): Promise<{ synchronous: number; wal: boolean }> {
    const synchronous = await this.db.executeQuery<{ synchronous: number }>(CompiledQuery.raw("PRAGMA synchronous", []));
    const journal = await this.db.executeQuery<{ journal_mode: string }>(CompiledQuery.raw("PRAGMA journal_mode", []));
    return { synchronous: Number(synchronous.rows[0]?.synchronous ?? FULL), wal: journal.rows[0]?.journal_mode === "wal" };
  }
}
