import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/expand";
const ref = (kind: string, name: string, digest: string) => `weave:///${P}/${kind}/${name}:${digest}`;

/**
 * `expand_columns` on the calls API reading through the objects side: refs in call inputs resolve
 * to published objects (also through refs nested inside them) and to dataset rows stored in
 * tables, in the forms the Python (`.../attr/rows/id/<row>`) and Node (`.../table/<t>/id/<row>`)
 * SDKs write.
 */
describe.each(testDialects)("expand_columns on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  const refs: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
    const publish = async (objectId: string, val: unknown) => ref("object", objectId, (await c.json("/obj/create", { obj: { project_id: P, object_id: objectId, val } })).digest);
    // `1.0` is sent as JSON text so the stored float keeps its spelling.
    refs.prompt = ref("object", "prompt", (await c.json("/obj/create", `{"obj": {"project_id": "${P}", "object_id": "prompt", "val": {"text": "Hi {name}", "temperature": 1.0}}}`)).digest);
    refs.model = await publish("model", { name: "m", prompt: refs.prompt });
    const table = await c.json("/table/create", {
      table: {
        project_id: P,
        rows: [
          { q: "2+2", a: "4" },
          { q: "3+3", a: "6" },
        ],
      },
    });
    refs.table = `weave:///${P}/table/${table.digest}`;
    refs.dataset = await publish("ds", { _type: "Dataset", _class_name: "Dataset", _bases: ["Object", "BaseModel"], rows: refs.table });
    refs.pythonRow = `${refs.dataset}/attr/rows/id/${table.row_digests[0]}`;
    refs.nodeRow = `${refs.table}/id/${table.row_digests[1]}`;
    refs.gone = await publish("gone", { bye: true });
    await c.json("/obj/delete", { project_id: P, object_id: "gone" });

    const calls = [
      { id: "py", inputs: { model: refs.model, example: refs.pythonRow } },
      { id: "node", inputs: { model: refs.model, example: refs.nodeRow, missing: ref("object", "nope", "v0"), gone: refs.gone, call: `weave:///${P}/call/py` } },
    ];
    await c.json("/call/upsert_batch", {
      batch: calls.flatMap((call, index) => [
        { mode: "start", req: { start: startOf(P, { ...call, started_at: `2024-05-01T12:00:0${index}Z` }) } },
        { mode: "end", req: { end: endOf(P, call.id) } },
      ]),
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const query = (body: Record<string, unknown>) => c.lines("/calls/stream_query", { project_id: P, ...body });

  it("replaces refs with the objects they name, shallow paths first, keeping each ref under _ref", async () => {
    const [py] = await query({ filter: { call_ids: ["py"] }, expand_columns: ["inputs.model.prompt", "inputs.model"] });
    expect(py.inputs.model).toEqual({ name: "m", prompt: { text: "Hi {name}", temperature: 1, _ref: refs.prompt }, _ref: refs.model });
    // The stored float reads back as Python wrote it.
    const raw = await c.post("/calls/stream_query", { project_id: P, filter: { call_ids: ["py"] }, expand_columns: ["inputs.model.prompt", "inputs.model"] });
    expect(raw.body).toContain('"temperature":1.0');
    const [batch] = (await c.json("/calls/query", { project_id: P, filter: { call_ids: ["py"] }, expand_columns: ["inputs.model"] })).calls;
    expect(batch.inputs.model._ref).toBe(refs.model);
  });

  it("expands dataset rows through a dataset object and through a table ref", async () => {
    const calls = await query({ expand_columns: ["inputs.example"] });
    expect(calls.map((call) => call.inputs.example)).toEqual([
      { q: "2+2", a: "4", _ref: refs.pythonRow },
      { q: "3+3", a: "6", _ref: refs.nodeRow },
    ]);
  });

  it("leaves unresolvable refs as they are and reads a deleted object as null", async () => {
    const [node] = await query({ filter: { call_ids: ["node"] }, expand_columns: ["inputs.missing", "inputs.gone", "inputs.call", "inputs.example.q"] });
    expect(node.inputs.missing).toBe(ref("object", "nope", "v0"));
    expect(node.inputs.gone).toBeNull();
    expect(node.inputs.call).toBe(`weave:///${P}/call/py`);
    // A path below a ref that was not expanded is left alone.
    expect(node.inputs.example).toBe(refs.nodeRow);
  });

  it("returns values unexpanded when return_expanded_column_values is false", async () => {
    const [py] = await query({ filter: { call_ids: ["py"] }, expand_columns: ["inputs.model"], return_expanded_column_values: false });
    expect(py.inputs.model).toBe(refs.model);
  });
});
