import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { jsonLines, type TraceClient, traceClient } from "../../../testing/trace.js";

const fileDigestOf = (text: string) => createHash("sha256").update(text).digest("base64url").replaceAll("-", "X").replaceAll("_", "Y");

describe.each(testDialects)("v2 object resources on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  let n = 0;
  let base: string;
  let p: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });
  const fresh = () => {
    p = `alice/v2-${++n}`;
    base = `/v2/${p}`;
  };
  const list = async (resource: string, query?: Record<string, string>) => jsonLines((await c.get(`${base}/${resource}`, query)).body) as Record<string, unknown>[];
  const readObj = async (objectId: string, digest: string) => (await c.post("/obj/read", { project_id: p, object_id: objectId, digest })).json().obj;

  it("creates ops from source code and reads the code back", async () => {
    fresh();
    const created = await c.post(`${base}/ops`, { name: "My Op", source_code: "def f(x):\n    return x\n" });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ object_id: "my_op", version_index: 0 });
    const stored = await readObj("my_op", created.json().digest);
    expect(stored).toMatchObject({ kind: "op", val: { _type: "CustomWeaveType", weave_type: { type: "Op" }, files: { "obj.py": fileDigestOf("def f(x):\n    return x\n") } } });
    const read = (await c.get(`${base}/ops/my_op/versions/${created.json().digest}`)).json();
    expect(read).toMatchObject({ object_id: "my_op", digest: created.json().digest, version_index: 0, code: "def f(x):\n    return x\n" });
    expect(Date.parse(read.created_at)).not.toBeNaN();

    const placeholder = (await c.post(`${base}/ops`, {})).json();
    expect(placeholder.object_id).toBe("Op");
    expect((await c.get(`${base}/ops/Op/versions/latest`)).json().code).toContain("Code-capture unavailable");
    await c.post(`${base}/ops`, { name: "My Op", source_code: "def f(x):\n    return 2 * x\n" });
    const ops = await list("ops");
    expect(ops.map((op) => [op.object_id, op.version_index])).toEqual([
      ["Op", 0],
      ["my_op", 1],
    ]);
    expect((await c.get(`${base}/ops/my_op/versions/v5`)).statusCode).toBe(404);
  });

  it("creates datasets over a table and lists and deletes their versions", async () => {
    fresh();
    const created = (
      await c.post(`${base}/datasets`, {
        name: "Eval Set",
        description: "two rows",
        rows: [
          { q: "1+1", a: "2" },
          { q: "2+2", a: "4" },
        ],
      })
    ).json();
    expect(created).toMatchObject({ object_id: "eval_set", version_index: 0 });
    const read = (await c.get(`${base}/datasets/eval_set/versions/${created.digest}`)).json();
    expect(read).toMatchObject({ object_id: "eval_set", name: "Eval Set", description: "two rows" });
    expect(read.rows).toMatch(new RegExp(`^weave:///${p}/table/[0-9a-f]{64}$`));
    const stored = await readObj("eval_set", "latest");
    expect(stored).toMatchObject({ base_object_class: "Dataset", val: { _type: "Dataset", _class_name: "Dataset", _bases: ["Object", "BaseModel"], rows: read.rows } });
    const rows = (await c.post("/refs/read_batch", { refs: [read.rows] })).json().vals[0];
    expect(rows).toEqual([
      { q: "1+1", a: "2" },
      { q: "2+2", a: "4" },
    ]);

    const second = (await c.post(`${base}/datasets`, { name: "Eval Set", rows: [] })).json();
    expect(second.version_index).toBe(1);
    expect((await list("datasets", { limit: "10" })).map((d) => d.version_index)).toEqual([0, 1]);
    const removed = await c.delete(`${base}/datasets/eval_set`, { digests: `${created.digest},${second.digest}` });
    expect(removed.json()).toEqual({ num_deleted: 2 });
    expect(await list("datasets")).toEqual([]);
    expect((await c.post(`${base}/datasets`, { name: "bad", rows: [1] })).statusCode).toBe(422);
  });

  it("creates scorers with score and summarize ops", async () => {
    fresh();
    const created = (await c.post(`${base}/scorers`, { name: "Exact Match", description: "1 when equal", op_source_code: "def score(output, a):\n    return output == a\n" })).json();
    expect(created).toMatchObject({ object_id: "exact_match", version_index: 0, scorer: `weave:///${p}/object/exact_match:${created.digest}` });
    const read = (await c.get(`${base}/scorers/exact_match/versions/latest`)).json();
    expect(read).toMatchObject({ name: "Exact Match", description: "1 when equal" });
    expect(read.score_op).toMatch(new RegExp(`^weave:///${p}/op/exact_match_score:[A-Za-z0-9]{43}$`));
    const scoreOp = read.score_op.split(":").pop();
    expect((await c.get(`${base}/ops/exact_match_score/versions/${scoreOp}`)).json().code).toContain("return output == a");
    expect((await list("scorers")).map((s) => s.name)).toEqual(["Exact Match"]);
    expect((await c.delete(`${base}/scorers/exact_match`)).json()).toEqual({ num_deleted: 1 });
  });

  it("creates evaluations with their placeholder ops", async () => {
    fresh();
    const dataset = (await c.post(`${base}/datasets`, { name: "ds", rows: [{ x: 1 }] })).json();
    const scorer = (await c.post(`${base}/scorers`, { name: "s", op_source_code: "def score(): return 1" })).json();
    const datasetRef = `weave:///${p}/object/ds:${dataset.digest}`;
    const created = await c.post(`${base}/evaluations`, { name: "Nightly", dataset: datasetRef, scorers: [scorer.scorer], trials: 2, eval_attributes: { team: "ml" } });
    expect(created.statusCode).toBe(200);
    expect(created.json().evaluation_ref).toBe(`weave:///${p}/object/nightly:${created.json().digest}`);
    const read = (await c.get(`${base}/evaluations/nightly/versions/${created.json().digest}`)).json();
    expect(read).toMatchObject({ name: "Nightly", dataset: datasetRef, scorers: [scorer.scorer], trials: 2, evaluation_name: null });
    for (const op of ["evaluate_op", "predict_and_score_op", "summarize_op"]) expect(read[op]).toMatch(new RegExp(`^weave:///${p}/op/nightly\\.`));
    expect((await readObj("nightly", "latest")).val).toMatchObject({ _type: "Evaluation", team: "ml", metadata: null });
    expect((await list("evaluations")).map((e) => e.object_id)).toEqual(["nightly"]);
    expect((await c.post(`${base}/evaluations`, { name: "bad", dataset: "not a ref" })).statusCode).toBe(400);
    expect((await c.post(`${base}/evaluations`, { name: "bad", dataset: datasetRef, trials: 0 })).statusCode).toBe(422);
  });

  it("creates models with source and attributes", async () => {
    fresh();
    const created = (await c.post(`${base}/models`, { name: "Qwen Judge", source_code: "class M: pass\n", attributes: { temperature: 0.5, system: "be fair" } })).json();
    expect(created.model_ref).toBe(`weave:///${p}/object/qwen_judge:${created.digest}`);
    const read = (await c.get(`${base}/models/qwen_judge/versions/latest`)).json();
    expect(read).toMatchObject({ name: "Qwen Judge", description: null, source_code: "class M: pass\n", attributes: { temperature: 0.5, system: "be fair" } });
    await c.post(`${base}/models`, { name: "plain", source_code: "" });
    expect((await list("models")).map((m) => [m.object_id, m.attributes])).toEqual([
      ["qwen_judge", { temperature: 0.5, system: "be fair" }],
      ["plain", null],
    ]);
  });

  it("reads only resources of the asked kind and stays inside the entity", async () => {
    fresh();
    const dataset = (await c.post(`${base}/datasets`, { name: "ds", rows: [] })).json();
    expect((await c.get(`${base}/models/ds/versions/${dataset.digest}`)).statusCode).toBe(404);
    expect((await c.get(`${base}/ops/ds/versions/${dataset.digest}`)).statusCode).toBe(404);
    expect((await c.get(`/v2/bob/${p.split("/")[1]}/datasets`)).statusCode).toBe(404);
    const bob = traceClient(t, t.keys.bob);
    expect((await bob.get(`${base}/datasets/ds/versions/${dataset.digest}`)).statusCode).toBe(404);
    expect((await bob.post(`${base}/datasets`, { name: "x", rows: [] })).statusCode).toBe(404);
    expect((await c.get(`${base}/datasets`, { limit: "-1" })).statusCode).toBe(422);
  });
});
