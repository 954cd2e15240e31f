import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";

/** The Weave digest of a canonical text written out by hand (sha256, base64url, -→X, _→Y). */
const digestOfText = (text: string) => createHash("sha256").update(text).digest("base64url").replaceAll("-", "X").replaceAll("_", "Y");

describe.each(testDialects)("trace objects on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  let project = 0;
  /** A fresh project per test, so tests do not see each other's objects. */
  let p: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });
  const fresh = () => {
    p = `alice/objects-${++project}`;
    return p;
  };
  const create = (objectId: string, val: unknown, extra: Record<string, unknown> = {}) => c.post("/obj/create", { obj: { project_id: p, object_id: objectId, val, ...extra } });
  const read = (objectId: string, digest: string, extra: Record<string, unknown> = {}) => c.post("/obj/read", { project_id: p, object_id: objectId, digest, ...extra });
  const query = (body: Record<string, unknown> = {}) => c.post("/objs/query", { project_id: p, ...body });
  const remove = (objectId: string, digests?: string[]) => c.post("/obj/delete", { project_id: p, object_id: objectId, ...(digests ? { digests } : {}) });

  it("creates versions with byte-exact digests and reads them back with floats intact", async () => {
    fresh();
    const body = `{"obj": {"project_id": "${p}", "object_id": "cfg", "val": {"temperature": 1.0, "seed": 12345678901234567890, "name": "café", "b": [2.5e-7]}}}`;
    const created = await c.post("/obj/create", body);
    expect(created.statusCode).toBe(200);
    const canonical = '{"b": [2.5e-07], "name": "caf\\u00e9", "seed": 12345678901234567890, "temperature": 1.0}';
    expect(created.json()).toEqual({ digest: digestOfText(canonical), object_id: "cfg" });

    const res = await read("cfg", created.json().digest);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('"val":{"b":[2.5e-7],"name":"café","seed":12345678901234567890,"temperature":1.0}');
    expect(res.json().obj).toMatchObject({ project_id: p, object_id: "cfg", version_index: 0, is_latest: 1, kind: "object", base_object_class: null, deleted_at: null });
    expect(res.json().obj.wb_user_id).toEqual(expect.any(String));
  });

  it("numbers versions, resolves latest and v<N>, and does not version an unchanged value", async () => {
    fresh();
    const digests = [];
    for (const i of [1, 2, 3]) digests.push((await create("obj_1", { i })).json().digest);
    expect((await create("obj_1", { i: 2 })).json().digest).toBe(digests[1]);
    const versions = (await query({ filter: { object_ids: ["obj_1"] } })).json().objs;
    expect(versions.map((v: { version_index: number }) => v.version_index)).toEqual([0, 1, 2]);
    expect(versions.map((v: { is_latest: number }) => v.is_latest)).toEqual([0, 0, 1]);
    expect((await read("obj_1", "latest")).json().obj.digest).toBe(digests[2]);
    expect((await read("obj_1", "v1")).json().obj.val).toEqual({ i: 2 });
    const missing = await read("obj_1", "v9");
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ reason: "Obj obj_1:v9 not found" });
  });

  it("deletes versions without reusing indices and revives a re-published digest", async () => {
    fresh();
    const digests = [];
    for (const i of [1, 2, 3]) digests.push((await create("obj_1", { i })).json().digest);
    const deleted = await remove("obj_1", ["v1"]);
    expect(deleted.json()).toEqual({ num_deleted: 1, deleted_versions: [{ digest: digests[1], base_object_class: null, leaf_object_class: null }] });
    expect((await query()).json().objs.map((v: { version_index: number }) => v.version_index)).toEqual([0, 2]);
    expect((await create("obj_1", { i: 4 })).statusCode).toBe(200);
    expect((await read("obj_1", "latest")).json().obj).toMatchObject({ version_index: 3, val: { i: 4 } });

    const gone = await read("obj_1", digests[1] as string);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().reason).toMatch(/^obj_1:v1 was deleted at /);
    expect(Date.parse(gone.json().deleted_at)).not.toBeNaN();

    // Re-publishing the deleted value revives it as the newest version.
    const revived = await create("obj_1", { i: 2 });
    expect(revived.json().digest).toBe(digests[1]);
    expect((await read("obj_1", "latest")).json().obj).toMatchObject({ digest: digests[1], version_index: 4, deleted_at: null });
  });

  it("numbers concurrent publishes of one object without gaps or duplicates", async () => {
    fresh();
    const results = await Promise.all([...Array.from({ length: 8 }, (_, i) => create("busy", { i })), create("busy", { i: 0 }), create("busy", { i: 0 })]);
    expect(results.every((res) => res.statusCode === 200)).toBe(true);
    const versions = (await query({ filter: { object_ids: ["busy"] } })).json().objs as { version_index: number; is_latest: number }[];
    expect(versions.map((v) => v.version_index).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(versions.filter((v) => v.is_latest === 1)).toHaveLength(1);
    expect(versions.find((v) => v.is_latest === 1)?.version_index).toBe(7);
  });

  it("hands latest to the newest surviving version and deletes by alias selectors", async () => {
    fresh();
    for (const i of [1, 2, 3]) await create("o", { i });
    expect((await remove("o", ["latest"])).json().num_deleted).toBe(1);
    expect((await read("o", "latest")).json().obj).toMatchObject({ version_index: 1, is_latest: 1 });
    expect((await query({ filter: { latest_only: true } })).json().objs.map((v: { version_index: number }) => v.version_index)).toEqual([1]);
    expect((await remove("o", ["v0"])).json().num_deleted).toBe(1);
    expect((await remove("o")).json().num_deleted).toBe(1);
    const latest = await read("o", "latest");
    expect(latest.statusCode).toBe(404);
    expect(latest.json().deleted_at).toEqual(expect.any(String));
  });

  it("reports delete requests that match nothing or only part", async () => {
    fresh();
    const d0 = (await create("o", { i: 0 })).json().digest;
    await create("o", { i: 1 });
    const partial = await remove("o", [d0, "invalid-digest"]);
    expect(partial.statusCode).toBe(404);
    expect(partial.json().reason).toBe("Delete request contains 2 digests, but found 1 objects to delete. Diff digests: {'invalid-digest'}");
    expect((await remove("nothing")).json().reason).toBe("Object nothing (None) not found when deleting.");
    const tooMany = await remove(
      "o",
      Array.from({ length: 101 }, (_, i) => `d${i}`),
    );
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().reason).toMatch(/Please delete 100 or fewer objects at a time/);
    expect((await remove("o", [d0])).statusCode).toBe(200);
    expect((await remove("o", [d0])).statusCode).toBe(404);
  });

  it("classifies objects and ops and filters queries by class, kind, id, latest and paging", async () => {
    fresh();
    await create("ds", { _type: "Dataset", _class_name: "Dataset", _bases: ["Object", "BaseModel"], rows: "weave:///x/y/table/abc" });
    await create("prompt", { _type: "StringPrompt", _class_name: "StringPrompt", _bases: ["Prompt", "Object", "BaseModel"], content: "hi" });
    await create("my_op", { _type: "CustomWeaveType", weave_type: { type: "Op" }, files: { "obj.py": "abc" }, load_op: "NO_LOAD_OP" });
    await create("plain", [1, 2]);
    const ids = async (body: Record<string, unknown>) => (await query(body)).json().objs.map((o: { object_id: string }) => o.object_id);
    expect(await ids({})).toEqual(["ds", "prompt", "my_op", "plain"]);
    expect(await ids({ filter: { is_op: true } })).toEqual(["my_op"]);
    expect(await ids({ filter: { is_op: false } })).toEqual(["ds", "prompt", "plain"]);
    expect(await ids({ filter: { base_object_classes: ["Prompt", "Dataset"] } })).toEqual(["ds", "prompt"]);
    expect(await ids({ filter: { exclude_base_object_classes: ["Dataset"] } })).toEqual(["prompt", "my_op", "plain"]);
    expect(await ids({ filter: { leaf_object_classes: ["StringPrompt"] } })).toEqual(["prompt"]);
    expect(await ids({ sort_by: [{ field: "object_id", direction: "desc" }] })).toEqual(["prompt", "plain", "my_op", "ds"]);
    expect(await ids({ sort_by: [{ field: "val.anything", direction: "desc" }] })).toEqual(["ds", "prompt", "my_op", "plain"]);
    expect(await ids({ limit: 2, offset: 1 })).toEqual(["prompt", "my_op"]);
    expect(await ids({ offset: 3 })).toEqual(["plain"]);
    const ops = (await query({ filter: { is_op: true } })).json().objs;
    expect(ops[0]).toMatchObject({ kind: "op", base_object_class: null });
    const prompt = (await query({ filter: { object_ids: ["prompt"] }, metadata_only: true, include_storage_size: true })).json().objs[0];
    expect(prompt).toMatchObject({ base_object_class: "Prompt", leaf_object_class: "StringPrompt", val: {} });
    expect(prompt.size_bytes).toBeGreaterThan(50);
  });

  it("enforces builtin_object_class, expected_digest, file-key safety and object id rules", async () => {
    fresh();
    const dataset = { _type: "Dataset", _class_name: "Dataset", _bases: ["Object", "BaseModel"] };
    expect((await create("a", dataset, { builtin_object_class: "Dataset" })).statusCode).toBe(200);
    expect((await create("a", dataset, { builtin_object_class: "Model" })).statusCode).toBe(400);
    const unknown = await create("b", { x: 1 }, { set_base_object_class: "Leaderboard" });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().reason).toBe("Unknown object class: Leaderboard");
    const expected = digestOfText('{"x": 1}');
    expect((await create("c", { x: 1 }, { expected_digest: expected })).json().digest).toBe(expected);
    expect((await create("c", { x: 2 }, { expected_digest: expected })).statusCode).toBe(400);
    const pathEscape = await create("d", { _type: "CustomWeaveType", weave_type: { type: "Op" }, files: { "../../etc/passwd": "x" } });
    expect(pathEscape.statusCode).toBe(400);
    const badId = await create("has space", { x: 1 });
    expect(badId.statusCode).toBe(403);
    expect(badId.json().reason).toMatch(/Invalid object name/);
  });

  it("refuses a value over the storable size with 413", async () => {
    fresh();
    const res = await create("huge", { text: "x".repeat(4 * 1024 * 1024 + 10) });
    expect(res.statusCode).toBe(413);
    expect(res.json().reason).toMatch(/Record too large/);
  });

  it("answers schema failures with 422 and ignores unknown fields", async () => {
    fresh();
    const missing = await c.post("/obj/create", { obj: { project_id: p, object_id: "x" } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual([{ loc: ["body", "obj", "val"], msg: "Field required", type: "missing" }]);
    expect((await c.post("/obj/read", { project_id: p, object_id: 5, digest: "latest" })).statusCode).toBe(422);
    expect((await c.post("/objs/query", { project_id: p, limit: -1 })).statusCode).toBe(422);
    expect((await c.post("/obj/create", "{not json")).json().detail[0].type).toBe("json_invalid");
    const extra = await c.post("/obj/create", { obj: { project_id: p, object_id: "x", val: 1, wb_user_id: "spoof", surprise: true }, also: 1 });
    expect(extra.statusCode).toBe(200);
    expect((await read("x", "latest")).json().obj.wb_user_id).not.toBe("spoof");
  });

  it("takes HTTP Basic api:<key>, Bearer and wandb-api-key, and refuses anything else", async () => {
    fresh();
    const body = { project_id: p, filter: {} };
    expect((await c.post("/objs/query", body)).statusCode).toBe(200);
    expect((await t.app.inject({ method: "POST", url: "/trace/objs/query", payload: body, headers: { authorization: `Bearer ${t.keys.alice}` } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: "POST", url: "/trace/objs/query", payload: body, headers: { "wandb-api-key": t.keys.alice } })).statusCode).toBe(200);
    const anonymous = await t.app.inject({ method: "POST", url: "/trace/objs/query", payload: body });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().reason).toEqual(expect.any(String));
    const wrong = await traceClient(t, "fw_not-a-key").post("/objs/query", body);
    expect(wrong.statusCode).toBe(401);
  });
});
