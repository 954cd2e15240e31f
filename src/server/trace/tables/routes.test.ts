import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { jsonLines, type TraceClient, traceClient } from "../../../testing/trace.js";

const digestOfText = (text: string) => createHash("sha256").update(text).digest("base64url").replaceAll("-", "X").replaceAll("_", "Y");
const tableDigestOf = (rowDigests: string[]) => createHash("sha256").update(rowDigests.join("")).digest("hex");

describe.each(testDialects)("trace tables on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  let n = 0;
  let p: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });
  const fresh = () => (p = `alice/tables-${++n}`);
  const createTable = async (rows: unknown[]) => (await c.post("/table/create", { table: { project_id: p, rows } })).json() as { digest: string; row_digests: string[] };
  const queryRows = async (body: Record<string, unknown>) => (await c.post("/table/query", { project_id: p, ...body })).json().rows as { digest: string; val: unknown; original_index: number }[];

  it("creates tables with Weave's row and table digests, idempotently", async () => {
    fresh();
    const body = `{"table": {"project_id": "${p}", "rows": [{"q": "2+2", "a": 4.0}, {"q": "ü"}, {"q": "2+2", "a": 4.0}]}}`;
    const created = await c.post("/table/create", body);
    expect(created.statusCode).toBe(200);
    const rowDigests = [digestOfText('{"a": 4.0, "q": "2+2"}'), digestOfText('{"q": "\\u00fc"}'), digestOfText('{"a": 4.0, "q": "2+2"}')];
    expect(created.json()).toEqual({ digest: tableDigestOf(rowDigests), row_digests: rowDigests });
    expect((await c.post("/table/create", body)).json()).toEqual(created.json());
    const rows = await c.post("/table/query", { project_id: p, digest: created.json().digest });
    expect(rows.body).toContain('"val":{"q":"2+2","a":4.0}');
    expect(rows.json().rows.map((r: { original_index: number }) => r.original_index)).toEqual([0, 1, 2]);
    expect((await createTable([])).digest).toBe(tableDigestOf([]));
  });

  it("queries with filters, sorting, paging and as JSON Lines", async () => {
    fresh();
    const rows = [
      { n: 3, tag: "c", nested: { k: "b" } },
      { n: 1, tag: "a" },
      { n: 2, tag: "b", nested: { k: "a" } },
      { n: null, tag: "d" },
    ];
    const { digest, row_digests } = await createTable(rows);
    const ns = (found: { val: unknown }[]) => found.map((row) => (row.val as { n: number }).n);
    expect(ns(await queryRows({ digest, sort_by: [{ field: "n", direction: "asc" }] }))).toEqual([null, 1, 2, 3]);
    expect(ns(await queryRows({ digest, sort_by: [{ field: "n", direction: "desc" }] }))).toEqual([3, 2, 1, null]);
    expect(ns(await queryRows({ digest, sort_by: [{ field: "nested.k", direction: "asc" }] }))).toEqual([1, null, 2, 3]);
    expect(ns(await queryRows({ digest, limit: 2, offset: 1 }))).toEqual([1, 2]);
    const sortedPage = await queryRows({ digest, sort_by: [{ field: "tag", direction: "desc" }], limit: 1 });
    expect(sortedPage).toEqual([{ digest: row_digests[3], val: { n: null, tag: "d" }, original_index: 3 }]);
    const filtered = await queryRows({ digest, filter: { row_digests: [row_digests[2], row_digests[0]] } });
    expect(filtered.map((row) => row.original_index)).toEqual([0, 2]);
    for (const field of ["", "a..b", ".a", "a."]) {
      const bad = await c.post("/table/query", { project_id: p, digest, sort_by: [{ field, direction: "asc" }] });
      expect(bad.statusCode, field).toBe(400);
    }
    const stream = await c.post("/table/query_stream", { project_id: p, digest, offset: 1 });
    expect(stream.headers["content-type"]).toBe("application/jsonl");
    expect(jsonLines(stream.body)).toEqual(await queryRows({ digest, offset: 1 }));
    const badStream = await c.post("/table/query_stream", { project_id: p, digest, sort_by: [{ field: "", direction: "asc" }] });
    expect(badStream.statusCode).toBe(400);
    expect(await queryRows({ digest: "0".repeat(64) })).toEqual([]);
  });

  it("streams tables larger than one page in order", async () => {
    fresh();
    const rows = Array.from({ length: 1203 }, (_, i) => ({ i, text: `row ${i}` }));
    const { digest } = await createTable(rows);
    const streamed = jsonLines((await c.post("/table/query_stream", { project_id: p, digest })).body) as { val: { i: number } }[];
    expect(streamed.map((row) => row.val.i)).toEqual(rows.map((row) => row.i));
    expect((await c.post("/table/query_stats", { project_id: p, digest })).json()).toEqual({ count: 1203 });
  });

  it("updates tables by append, insert and pop", async () => {
    fresh();
    const base = await createTable([{ x: 0 }, { x: 1 }]);
    const res = await c.post("/table/update", {
      project_id: p,
      base_digest: base.digest,
      updates: [{ append: { row: { x: 2 } } }, { insert: { index: 0, row: { x: -1 } } }, { pop: { index: 1 } }],
    });
    expect(res.statusCode).toBe(200);
    const expectedRows = [{ x: -1 }, { x: 1 }, { x: 2 }];
    expect((await queryRows({ digest: res.json().digest })).map((row) => row.val)).toEqual(expectedRows);
    expect(res.json().digest).toBe(tableDigestOf(expectedRows.map((row) => digestOfText(`{"x": ${row.x}}`))));
    expect(res.json().updated_row_digests).toEqual([digestOfText('{"x": 2}'), digestOfText('{"x": -1}'), digestOfText('{"x": 0}')]);
    // The base table is unchanged.
    expect((await queryRows({ digest: base.digest })).map((row) => row.val)).toEqual([{ x: 0 }, { x: 1 }]);
    const outOfRange = await c.post("/table/update", { project_id: p, base_digest: base.digest, updates: [{ pop: { index: 2 } }] });
    expect(outOfRange.statusCode).toBe(400);
    expect(outOfRange.json().reason).toBe("Index out of range");
    expect((await c.post("/table/update", { project_id: p, base_digest: base.digest, updates: [{ insert: { index: 3, row: {} } }] })).statusCode).toBe(400);
    expect((await c.post("/table/update", { project_id: p, base_digest: "f".repeat(64), updates: [] })).statusCode).toBe(404);
    expect((await c.post("/table/update", { project_id: p, base_digest: base.digest, updates: [{ replace: {} }] })).statusCode).toBe(422);
  });

  it("creates tables from stored row digests and reports batch stats", async () => {
    fresh();
    const a = await createTable([{ v: "a" }, { v: "b" }]);
    const b = await createTable([{ v: "c" }]);
    const combined = [...a.row_digests, ...b.row_digests];
    const res = await c.post("/table/create_from_digests", { project_id: p, row_digests: combined });
    expect(res.json()).toEqual({ digest: tableDigestOf(combined) });
    expect((await queryRows({ digest: res.json().digest })).map((row) => row.val)).toEqual([{ v: "a" }, { v: "b" }, { v: "c" }]);
    const unknownRow = await c.post("/table/create_from_digests", { project_id: p, row_digests: ["nope"] });
    expect(unknownRow.statusCode).toBe(404);
    expect((await c.post("/table/create_from_digests", { project_id: p, row_digests: combined, expected_digest: "wrong" })).statusCode).toBe(400);

    const stats = await c.post("/table/query_stats_batch", { project_id: p, digests: [a.digest, "missing", b.digest], include_storage_size: true });
    expect(stats.json().tables).toEqual([
      { count: 2, digest: a.digest, storage_size_bytes: Buffer.byteLength('{"v": "a"}') * 2 },
      { count: 1, digest: b.digest, storage_size_bytes: Buffer.byteLength('{"v": "c"}') },
    ]);
    expect((await c.post("/table/query_stats_batch", { project_id: p, digests: [b.digest] })).json().tables).toEqual([{ count: 1, digest: b.digest, storage_size_bytes: null }]);
    expect((await c.post("/table/query_stats", { project_id: p, digest: "missing" })).statusCode).toBe(404);
  });

  it("rejects rows that are not objects and oversized rows", async () => {
    fresh();
    const notDict = await c.post("/table/create", { table: { project_id: p, rows: [{ ok: 1 }, [1, 2]] } });
    expect(notDict.statusCode).toBe(422);
    expect(notDict.json().detail[0].loc).toEqual(["body", "table", "rows", 1]);
    const huge = await c.post("/table/create", { table: { project_id: p, rows: [{ text: "x".repeat(4 * 1024 * 1024 + 1) }] } });
    expect(huge.statusCode).toBe(413);
  });
});
