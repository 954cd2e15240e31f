import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { type DialectName, openStore, type Store } from "../store/db.js";

/** The dialects this test run covers: SQLite always, PostgreSQL when the global setup found one. */
export const testDialects: DialectName[] = process.env.TEST_DATABASE_URL ? ["sqlite", "postgres"] : ["sqlite"];

export interface TestStore extends Store {
  dataDir: string;
  /** The URL of a PostgreSQL store (undefined for SQLite), for child processes. */
  databaseUrl: string | undefined;
}

export function makeTempDir(prefix = "flywheel-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A fresh, migrated, empty store; PostgreSQL gets a database of its own, dropped on close. */
export async function openTestStore(dialect: DialectName, dataDir = makeTempDir()): Promise<TestStore> {
  const databaseUrl = dialect === "postgres" ? await createTestDatabase() : undefined;
  const store = await openStore({ databaseUrl, dataDir });
  return {
    ...store,
    dataDir,
    databaseUrl,
    async close() {
      await store.close();
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function adminUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error("TEST_DATABASE_URL is not set");
  return url;
}

export async function createTestDatabase(): Promise<string> {
  const name = `fw_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropTestDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
