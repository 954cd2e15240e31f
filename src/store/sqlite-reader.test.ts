import { sql } from "kysely";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../testing/stores.js";
import { openStore, type Store } from "./db.js";
import { readOffLoop, readTextColumnOffLoop } from "./sqlite-reader.js";

/** A statement that keeps SQLite busy for a good fraction of a second and answers one row. */
const slowCount = sql<{ n: number }>`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < 3000000) SELECT COUNT(*) AS n FROM seq`;

/** The longest the event loop went without running a 2 ms interval while `work` ran. */
async function longestLoopStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(longest, performance.now() - last);
}

/** What the machine adds right now: the longest pause of an idle event loop over half a second (tens of ms on a loaded 2-core machine). */
const idleStall = () => longestLoopStall(() => new Promise((resolve) => setTimeout(resolve, 500)));

describe("readOffLoop on SQLite", () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = makeTempDir("flywheel-sqlite-reader-");
    store = await openStore({ dataDir: dir });
    await sql`CREATE TABLE reader_probe (id INTEGER PRIMARY KEY, label TEXT)`.execute(store.db);
    await sql`INSERT INTO reader_probe (id, label) VALUES (1, 'one'), (2, 'two'), (3, NULL)`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers the rows the server's connection answers, also through a copy made by withTables", async () => {
    const query = sql<{ id: number; label: string | null }>`SELECT id, label FROM reader_probe WHERE id >= ${2} ORDER BY id DESC`.compile(store.db);
    expect(await readOffLoop(store.db.withTables<{ other: { x: number } }>(), query)).toEqual([
      { id: 3, label: null },
      { id: 2, label: "two" },
    ]);
    expect(await readOffLoop(store.db, query)).toEqual((await store.db.executeQuery(query)).rows);
  });

  it("keeps the event loop free while a long statement runs, which on the server's connection holds it", async () => {
    const onLoop = await longestLoopStall(() => slowCount.execute(store.db));
    const idle = await idleStall();
    const offLoop = await longestLoopStall(async () => expect(await readOffLoop(store.db, slowCount.compile(store.db))).toEqual([{ n: 3_000_000 }]));
    console.log(`a 3,000,000-row count: longest event-loop stall ${onLoop.toFixed(0)} ms on the connection, ${offLoop.toFixed(0)} ms through the reader (idle: ${idle.toFixed(0)} ms)`);
    expect(onLoop).toBeGreaterThan(150);
    expect(offLoop).toBeLessThan(100 + idle);
  }, 60_000);

  it("only reads, and reports SQLite's errors with their codes", async () => {
    await expect(readOffLoop(store.db, sql`DELETE FROM reader_probe RETURNING id`.compile(store.db))).rejects.toMatchObject({ code: "SQLITE_READONLY" });
    await expect(readOffLoop(store.db, sql`SELECT missing_column FROM reader_probe`.compile(store.db))).rejects.toMatchObject({ code: "SQLITE_ERROR", message: expect.stringContaining("no such column") });
    expect(await readOffLoop(store.db, sql<{ n: number }>`SELECT COUNT(*) AS n FROM reader_probe`.compile(store.db))).toEqual([{ n: 3 }]);
  });

  it("sees what was committed, and inside a transaction reads on the transaction's connection", async () => {
    await sql`INSERT INTO reader_probe (id, label) VALUES (4, 'four')`.execute(store.db);
    const count = sql<{ n: number }>`SELECT COUNT(*) AS n FROM reader_probe`.compile(store.db);
    expect(await readOffLoop(store.db, count)).toEqual([{ n: 4 }]);
    await store.db.transaction().execute(async (trx) => {
      await sql`INSERT INTO reader_probe (id, label) VALUES (5, 'five')`.execute(trx);
      expect(await readOffLoop(trx, count)).toEqual([{ n: 5 }]);
    });
  });

  it("hands over a text column whole, decoding it a slice at a time", async () => {
    const query = sql`SELECT label FROM (SELECT 'é' || id AS label, id FROM reader_probe UNION ALL SELECT '', 0 UNION ALL SELECT '日本 🙂', 9) ORDER BY id`.compile(store.db);
    const list = await readTextColumnOffLoop(store.db, query);
    const expected = ["", ...(await store.db.executeQuery<{ label: string }>(query)).rows.slice(1).map((row) => row.label)];
    expect(list.length).toBe(expected.length);
    expect(list.slice(0, list.length)).toEqual(expected);
    expect(list.slice(1, 3)).toEqual(expected.slice(1, 3));
    expect(list.slice(list.length, list.length + 5)).toEqual([]);
    await store.db.transaction().execute(async (trx) => expect(await readTextColumnOffLoop(trx, query)).toEqual(expected));
  });

  it("reads 300,000 sorted ids without a long pause of the event loop", async () => {
    const ids = sql`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < 300000) SELECT printf('c%09d', x) AS id FROM seq ORDER BY id DESC`.compile(store.db);
    let list: Awaited<ReturnType<typeof readTextColumnOffLoop>> | undefined;
    const idle = await idleStall();
    const stall = await longestLoopStall(async () => (list = await readTextColumnOffLoop(store.db, ids)));
    console.log(`300,000 ids: longest event-loop stall ${stall.toFixed(0)} ms (idle: ${idle.toFixed(0)} ms)`);
    expect(list!.length).toBe(300_000);
    expect(list!.slice(0, 2)).toEqual(["c000300000", "c000299999"]);
    expect(stall).toBeLessThan(100 + idle);
  }, 60_000);
});
