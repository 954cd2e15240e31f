import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";

describe.each(testDialects)("refs/read_batch on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  const p = "alice/refs";
  let table: { digest: string; row_digests: string[] };
  let dsDigest: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
    // Raw JSON text: a JS object literal would turn 1.0 into 1 before it reached the server.
    table = (await c.post("/table/create", `{"table": {"project_id": "${p}", "rows": [{"q": "a", "n": 1.0}, {"q": "b", "n": 2}]}}`)).json();
    const dataset = { _type: "Dataset", _class_name: "Dataset", _bases: ["Object", "BaseModel"], name: "ds", rows: `weave:///${p}/table/${table.digest}` };
    dsDigest = (await c.post("/obj/create", { obj: { project_id: p, object_id: "ds", val: dataset } })).json().digest;
    await c.post("/obj/create", { obj: { project_id: p, object_id: "cfg", val: { model: { "name/with slash": ["x", { deep: true }] }, list: [10, 20, 30] } } });
    await c.post("/obj/create", { obj: { project_id: p, object_id: "cfg", val: { version: 2 } } });
  });
  afterAll(async () => {
    await t.close();
  });
  const readRefs = (refs: string[], client = c) => client.post("/refs/read_batch", { refs });

  it("resolves object refs at a digest, latest, v<N> and through nested paths", async () => {
    const res = await readRefs([
      `weave:///${p}/object/ds:${dsDigest}`,
      `weave:///${p}/object/cfg:latest`,
      `weave:///${p}/object/cfg:v0/key/model/key/name%2Fwith%20slash/index/1/key/deep`,
      `weave:///${p}/object/cfg:v0/attr/list/index/-1`,
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json().vals).toEqual([expect.objectContaining({ name: "ds", rows: `weave:///${p}/table/${table.digest}` }), { version: 2 }, true, 30]);
  });

  it("resolves dataset rows by id, whole tables and table row refs", async () => {
    const res = await readRefs([
      `weave:///${p}/object/ds:${dsDigest}/attr/rows/id/${table.row_digests[0]}`,
      `weave:///${p}/table/${table.digest}`,
      `weave:///${p}/table/${table.digest}/id/${table.row_digests[1]}`,
      `weave:///${p}/table/${table.digest}/index/1/key/q`,
    ]);
    expect(res.json().vals).toEqual([
      { q: "a", n: 1 },
      [
        { q: "a", n: 1 },
        { q: "b", n: 2 },
      ],
      { q: "b", n: 2 },
      "b",
    ]);
    expect(res.body).toContain('{"q":"a","n":1.0}');
  });

  it("reads deleted versions as null and missing ones as 404", async () => {
    const tmp = (await c.post("/obj/create", { obj: { project_id: p, object_id: "tmp", val: 1 } })).json().digest;
    await c.post("/obj/delete", { project_id: p, object_id: "tmp" });
    expect((await readRefs([`weave:///${p}/object/tmp:${tmp}`, `weave:///${p}/object/cfg:v1`])).json().vals).toEqual([null, { version: 2 }]);
    const missing = await readRefs([`weave:///${p}/object/nope:latest`]);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().reason).toBe("Obj nope:latest not found");
    expect((await readRefs([`weave:///${p}/object/cfg:v0/key/absent`])).statusCode).toBe(404);
    expect((await readRefs([`weave:///${p}/object/cfg:v0/key/list/id/x`])).statusCode).toBe(400);
    expect((await readRefs([`weave:///${p}/table/${"0".repeat(64)}`])).statusCode).toBe(404);
  });

  it("rejects malformed refs, call refs and oversized batches with 400", async () => {
    for (const ref of ["not-a-ref", `weave:///${p}/object/noversion`, `weave:///${p}/call/abc`]) {
      const res = await readRefs([ref]);
      expect(res.statusCode, ref).toBe(400);
    }
    const many = await readRefs(Array.from({ length: 1001 }, () => `weave:///${p}/object/cfg:latest`));
    expect(many.statusCode).toBe(400);
    expect((await readRefs([])).json()).toEqual({ vals: [] });
  });

  it("never resolves another entity's refs", async () => {
    const bob = traceClient(t, t.keys.bob);
    const res = await readRefs([`weave:///${p}/object/cfg:latest`], bob);
    expect(res.statusCode).toBe(404);
    expect((await readRefs([`weave:///${p}/table/${table.digest}`], bob)).statusCode).toBe(404);
  });
});
