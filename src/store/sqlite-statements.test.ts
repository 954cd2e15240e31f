import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { withStatementCache } from "./sqlite-statements.js";

describe("SQLite statement cache", () => {
  const open = () => {
    const database = new BetterSqlite3(":memory:");
    database.exec("CREATE TABLE t (n INTEGER)");
    return database;
  };

  it("reuses a statement for the same text and still runs it with new parameters", () => {
    const cached = withStatementCache(open());
    const insert = cached.prepare("INSERT INTO t (n) VALUES (?)");
    insert.run([1]);
    expect(cached.prepare("INSERT INTO t (n) VALUES (?)")).toBe(insert);
    cached.prepare("INSERT INTO t (n) VALUES (?)").run([2]);
    expect(cached.prepare("SELECT n FROM t ORDER BY n").all([])).toEqual([{ n: 1 }, { n: 2 }]);
    cached.close();
  });

  it("forgets the least recently used statement beyond its capacity", () => {
    const cached = withStatementCache(open(), 2);
    const first = cached.prepare("SELECT 1");
    const second = cached.prepare("SELECT 2");
    expect(cached.prepare("SELECT 1")).toBe(first);
    cached.prepare("SELECT 3");
    expect(cached.prepare("SELECT 1")).toBe(first);
    expect(cached.prepare("SELECT 2")).not.toBe(second);
    cached.close();
  });

  it("prepares a fresh statement while the cached one is still being iterated", () => {
    const cached = withStatementCache(open());
    cached.prepare("INSERT INTO t (n) VALUES (1), (2)").run([]);
    const select = cached.prepare("SELECT n FROM t ORDER BY n");
    const rows = select.iterate([]);
    expect(rows.next().value).toEqual({ n: 1 });
    const again = cached.prepare("SELECT n FROM t ORDER BY n");
    expect(again).not.toBe(select);
    expect(again.all([])).toEqual([{ n: 1 }, { n: 2 }]);
    expect(rows.next().value).toEqual({ n: 2 });
    rows.return?.();
    cached.close();
  });
});
