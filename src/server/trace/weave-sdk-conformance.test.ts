import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { type TraceClient, traceClient } from "../../testing/trace.js";

type Weave = typeof import("weave");

const P = "alice/conformance";
const opName = (call: { op_name: string }) => call.op_name.replace(/^weave:\/\/\/[^/]+\/[^/]+\/op\//, "").replace(/:.*$/, "");

/**
 * Conformance with the published weave npm SDK (0.11.1, pinned as a dev dependency) against a
 * listening server, as a user runs it (`WF_TRACE_SERVER_URL`, `WANDB_API_KEY`,
 * `weave.init("entity/project")`): traced ops with nested calls, published objects and a dataset
 * (its table), an op output holding an image file, feedback through `addScore`, and an
 * evaluation with the SDK's Evaluation class — each read back through the HTTP API after the
 * SDK's own batching has flushed. (Objects, prompts and media alone: weave-sdk-objects.test.ts.)
 */
describe("the weave SDK end to end against the trace API", () => {
  let t: TestApp;
  let c: TraceClient;
  let weave: Weave;
  let client: Awaited<ReturnType<Weave["init"]>>;
  const saved = { url: process.env.WF_TRACE_SERVER_URL, key: process.env.WANDB_API_KEY };
  beforeAll(async () => {
    t = await startTestApp("sqlite");
    c = traceClient(t, t.keys.alice);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    process.env.WF_TRACE_SERVER_URL = `http://127.0.0.1:${port}/trace`;
    process.env.WANDB_API_KEY = t.keys.alice;
    weave = await import("weave");
    client = await weave.init(P);
  });
  afterAll(async () => {
    await client.waitForBatchProcessing();
    process.env.WF_TRACE_SERVER_URL = saved.url;
    process.env.WANDB_API_KEY = saved.key;
    await t.close();
  });

  const calls = (body: Record<string, unknown> = {}) => c.lines("/calls/stream_query", { project_id: P, ...body });
  /** Waits for the SDK to send every call it has queued (its own batch flushing). */
  const flushed = () => client.waitForBatchProcessing();

  it("traces an op with nested op calls as one call tree", async () => {
    const double = weave.op(async function doubleIt(x: number) {
      return x * 2;
    });
    const pipeline = weave.op(async function pipelineOp(x: number) {
      const once = await double(x);
      const twice = await double(once);
      return { once, twice };
    });
    expect(await pipeline(3)).toEqual({ once: 6, twice: 12 });
    await flushed();

    const [root] = await calls({ filter: { trace_roots_only: true, op_names: [] }, query: { $expr: { $contains: { input: { $getField: "op_name" }, substr: { $literal: "/op/pipelineOp:" } } } } });
    expect(root).toMatchObject({ project_id: P, parent_id: null, inputs: { arg0: 3 }, output: { once: 6, twice: 12 }, exception: null });
    expect(root.attributes.weave).toMatchObject({ source: "js-sdk" });
    expect(root.summary.weave).toMatchObject({ status: "success", trace_name: "pipelineOp", latency_ms: expect.any(Number) });
    const children = await calls({ filter: { parent_ids: [root.id] } });
    expect(children.map((call) => [opName(call), call.inputs.arg0, call.output])).toEqual([
      ["doubleIt", 3, 6],
      ["doubleIt", 6, 12],
    ]);
    expect(children.every((call) => call.trace_id === root.trace_id)).toBe(true);
    // The op itself is a published object whose source file is stored.
    const op = (await c.json("/obj/read", { project_id: P, object_id: "doubleIt", digest: "latest" })).obj;
    expect(op.kind).toBe("op");
    expect((await c.post("/file/content", { project_id: P, digest: op.val.files["obj.py"] })).body).toContain("x * 2");
    // The SDK reads its calls back through the same API.
    const sdkCalls = await client.getCalls({ trace_ids: [root.trace_id] });
    expect(sdkCalls.map((call) => call.id).sort()).toEqual([root.id, ...children.map((call) => call.id)].sort());
  });

  it("publishes objects and a dataset whose table rows read back", async () => {
    const config = await client.publish({ temperature: 0.5, stops: ["\n"] }, "sampling-config");
    expect((await c.json("/obj/read", { project_id: P, object_id: "sampling-config", digest: config.digest })).obj.val).toEqual({ temperature: 0.5, stops: ["\n"] });
    const dataset = new weave.Dataset({
      name: "capitals",
      rows: [
        { country: "France", capital: "Paris" },
        { country: "Japan", capital: "Tokyo" },
      ],
    });
    const ref = await dataset.save();
    const stored = (await c.json("/obj/read", { project_id: P, object_id: ref.objectId, digest: ref.digest })).obj;
    expect(stored).toMatchObject({ base_object_class: "Dataset", val: { _type: "Dataset", name: "capitals" } });
    const table = await c.json("/table/query", { project_id: P, digest: stored.val.rows.split("/").pop() });
    expect(table.rows.map((row: { val: unknown }) => row.val)).toEqual([
      { country: "France", capital: "Paris" },
      { country: "Japan", capital: "Tokyo" },
    ]);
    expect((await c.json("/table/query_stats", { project_id: P, digest: stored.val.rows.split("/").pop() })).count).toBe(2);
  });

  it("stores an image an op returns as a file the call output refers to", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7, 7, 7]);
    const draw = weave.op(async function drawPicture(caption: string) {
      return { caption, picture: weave.weaveImage({ data: png, imageType: "png" }) };
    });
    await draw("a dot");
    await flushed();
    const [call] = await calls({ query: { $expr: { $contains: { input: { $getField: "op_name" }, substr: { $literal: "/op/drawPicture:" } } } } });
    expect(call.output.caption).toBe("a dot");
    const picture = call.output.picture;
    expect(picture).toMatchObject({ _type: "CustomWeaveType", weave_type: { type: "PIL.Image.Image" } });
    const content = await c.post("/file/content", { project_id: P, digest: picture.files["image.png"] });
    expect(content.rawPayload.equals(png)).toBe(true);
  });

  it("adds a score to a call as runnable feedback", async () => {
    const answer = weave.op(async function answerQuestion(question: string) {
      return question.endsWith("?") ? "yes" : "no";
    });
    const isYes = weave.op(async function isYesScorer(output: string) {
      return { correct: output === "yes" };
    });
    await answer("Is it?");
    await isYes("yes");
    await flushed();
    const [predict] = await calls({ query: { $expr: { $contains: { input: { $getField: "op_name" }, substr: { $literal: "/op/answerQuestion:" } } } } });
    const [scorer] = await calls({ query: { $expr: { $contains: { input: { $getField: "op_name" }, substr: { $literal: "/op/isYesScorer:" } } } } });
    const feedbackId = await client.addScore(predict.id, scorer.id, scorer.op_name, { correct: true });
    const feedback = await c.json("/feedback/query", { project_id: P, query: { $expr: { $eq: [{ $getField: "id" }, { $literal: feedbackId }] } } });
    expect(feedback.result).toEqual([
      expect.objectContaining({
        weave_ref: `weave:///${P}/call/${predict.id}`,
        feedback_type: "wandb.runnable.isYesScorer",
        payload: { output: { correct: true } },
        runnable_ref: scorer.op_name,
        call_ref: `weave:///${P}/call/${scorer.id}`,
      }),
    ]);
    const [withFeedback] = await calls({ filter: { call_ids: [predict.id] }, include_feedback: true });
    expect(withFeedback.summary.weave.feedback.map((row: { id: string }) => row.id)).toEqual([feedbackId]);
  });

  it("runs an Evaluation and reads its calls, progress and results back", async () => {
    const dataset = new weave.Dataset({
      name: "questions",
      rows: [
        { question: "Is it?", expected: "yes" },
        { question: "It is.", expected: "no" },
        { question: "Why?", expected: "no" },
      ],
    });
    const model = weave.op(async function askModel({ datasetRow }: { datasetRow: { question: string } }) {
      return datasetRow.question.endsWith("?") ? "yes" : "no";
    });
    const matches = weave.op(async function matchesExpected({ modelOutput, datasetRow }: { modelOutput: string; datasetRow: { expected: string } }) {
      return modelOutput === datasetRow.expected;
    });
    const evaluation = new weave.Evaluation({ name: "question-eval", dataset, scorers: [matches] });
    const summary = await evaluation.evaluate({ model });
    expect(summary.matchesExpected).toEqual({ true_count: 2, true_fraction: 2 / 3 });
    await flushed();

    const [root] = await calls({ query: { $expr: { $contains: { input: { $getField: "op_name" }, substr: { $literal: "Evaluation.evaluate" } } } } });
    expect(root).toMatchObject({ parent_id: null, exception: null, output: expect.objectContaining({ matchesExpected: { true_count: 2, true_fraction: 2 / 3 } }) });
    const rows = await calls({ filter: { parent_ids: [root.id] } });
    expect(rows.map(opName)).toEqual(["Evaluation.predictAndScore", "Evaluation.predictAndScore", "Evaluation.predictAndScore"]);
    for (const row of rows) {
      const leaves = await calls({ filter: { parent_ids: [row.id] } });
      expect(leaves.map(opName)).toEqual(["askModel", "matchesExpected"]);
      expect(row.output).toMatchObject({ model_success: true, model_output: leaves[0].output, scores: { matchesExpected: leaves[1].output } });
    }
    // The evaluation object and its dataset and scorer refs were published with it.
    const evaluationObject = (await c.json("/refs/read_batch", { refs: [root.inputs.self] })).vals[0];
    expect(evaluationObject).toMatchObject({ _type: "Evaluation", dataset: expect.stringMatching(/^weave:\/\/\//) });

    expect((await c.json("/evaluations/status", { project_id: P, call_id: root.id })).status).toEqual({ code: "complete", output: root.output });
    const results = await c.json("/v2/alice/conformance/eval_results/query", { evaluation_call_ids: [root.id], include_raw_data_rows: true, resolve_row_refs: true, include_summary: true });
    expect(results.total_rows).toBe(3);
    expect(results.rows.map((row: any) => row.raw_data_row.question).sort()).toEqual(["Is it?", "It is.", "Why?"]);
    const trials = results.rows.flatMap((row: any) => row.evaluations[0].trials);
    expect(trials.map((trial: any) => trial.scores.matchesExpected).sort()).toEqual([false, true, true]);
    expect(results.summary.evaluations[0].scorer_stats).toEqual([expect.objectContaining({ scorer_key: "matchesExpected", value_type: "binary", pass_true_count: 2, pass_rate: 2 / 3 })]);
  });
});
