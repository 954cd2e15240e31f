import fs from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openTestStore, type TestStore } from "../testing/stores.js";

describe("SQLite WAL commit", () => {
  let store: TestStore;
  afterEach(async () => {
    await store.close();
  });
  const statement = (text: string, parameters: unknown[] = []) => CompiledQuery.raw(text, parameters);
  const synchronous = async () => Number((await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(store.db)).rows[0]!.synchronous);

  it("commits all statements, durably visible to another connection, and keeps the connection at FULL", async () => {
    store = await openTestStore("sqlite");
    await sql`CREATE TABLE t (n INTEGER PRIMARY KEY)`.execute(store.db);
    expect(await synchronous()).toBe(2);
    await store.walCommit!.run([statement("INSERT INTO t (n) VALUES (?)", [1]), statement("INSERT INTO t (n) VALUES (?), (?)", [2, 3])]);
    expect(await synchronous()).toBe(2);
    expect(fs.existsSync(`${store.location}-wal`)).toBe(true);
    const other = new BetterSqlite3(store.location, { readonly: true });
    expect(other.prepare("SELECT n FROM t ORDER BY n").all()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    other.close();
  });

  it("rolls the whole transaction back when a statement fails", async () => {
    store = await openTestStore("sqlite");
    await sql`CREATE TABLE t (n INTEGER PRIMARY KEY)`.execute(store.db);
    await expect(store.walCommit!.run([statement("INSERT INTO t (n) VALUES (1)"), statement("INSERT INTO t (n) VALUES (1)")])).rejects.toThrow(/UNIQUE/);
    expect((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM t`.execute(store.db)).rows[0]!.n).toBe(0);
    expect(await synchronous()).toBe(2);
    await store.walCommit!.run([statement("INSERT INTO t (n) VALUES (1)")]);
    expect((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM t`.execute(store.db)).rows[0]!.n).toBe(1);
  });

  it("leaves a connection configured below FULL as it is", async () => {
    store = await openTestStore("sqlite");
    await sql`CREATE TABLE t (n INTEGER PRIMARY KEY)`.execute(store.db);
    await sql`PRAGMA synchronous = NORMAL`.execute(store.db);
    await store.walCommit!.run([statement("INSERT INTO t (n) VALUES (1)")]);
    expect(await synchronous()).toBe(1);
  });
});
