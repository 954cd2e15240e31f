import fs from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrations/index.js";
import { SqliteWalCommit } from "./sqlite-commit.js";
import { attachSqliteReader, SqliteReader } from "./sqlite-reader.js";
import { withStatementCache } from "./sqlite-statements.js";
import type { Database } from "./schema.js";

export type DialectName = "sqlite" | "postgres";

export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Human-readable location (file path or URL without password), for logs. */
  location: string;
  /** SQLite only: transactions whose commit syncs the disk off the event loop, for bulk writes. */
  walCommit?: SqliteWalCommit;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** postgres:// URL; unset → SQLite at `<dataDir>/flywheel.db`. */
  databaseUrl?: string;
  dataDir: string;
  /** Pool size for PostgreSQL. */
  maxConnections?: number;
}

// int8 (COUNT(*), bigint columns) arrives as a string by default; every bigint we store fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Opens the database and brings its schema to the latest migration. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl ? openPostgres(options.databaseUrl, options.maxConnections ?? 10) : openSqlite(options.dataDir);
  try {
    await migrateToLatest(store.db);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

function openSqlite(dataDir: string): Store {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, "flywheel.db");
  // Readable by the owner only (keys' hashes, traces, data); SQLite gives its -wal and -shm files the same mode.
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, "a", 0o600));
  const sqlite = new BetterSqlite3(file);
  // WAL lets readers run beside the writer; FULL syncs each commit, so an acknowledged write
  // survives a crash of the process or the machine. busy_timeout covers worker processes that
  // share the file.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 10000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const walCommit = new SqliteWalCommit(db, file);
  // Reads that sort a whole project run there, off the event loop (readOffLoop).
  const reader = new SqliteReader(file);
  attachSqliteReader(db, reader);
  return {
    db,
    dialect: "sqlite",
    location: file,
    walCommit,
    close: async () => {
      await reader.close();
      await walCommit.close();
      await db.destroy();
    },
  };
}

function openPostgres(url: string, maxConnections: number): Store {
  const pool = new pg.Pool({ connectionString: url, max: maxConnections });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: "postgres", location: redactUrl(url), close: () => db.destroy() };
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}
