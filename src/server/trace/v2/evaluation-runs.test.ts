import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { jsonLines, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/runs";
const V2 = "/v2/alice/runs";

/**
 * The v2 evaluation runs, predictions, scores and eval results: created through the v2 routes,
 * read back through them and through the calls and feedback APIs, since they are calls underneath.
 */
describe.each(testDialects)("v2 evaluation runs on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  let evaluation: string;
  let model: string;
  let scorer: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
    const dataset = await c.json(`${V2}/datasets`, {
      name: "sums",
      rows: [
        { q: "1+1", a: "2" },
        { q: "2+2", a: "4" },
      ],
    });
    scorer = (await c.json(`${V2}/scorers`, { name: "Exact Match", op_source_code: "def score(output, a): return output == a" })).scorer;
    evaluation = (await c.json(`${V2}/evaluations`, { name: "sums-eval", dataset: `weave:///${P}/object/${dataset.object_id}:${dataset.digest}`, scorers: [scorer] })).evaluation_ref;
    model = (await c.json(`${V2}/models`, { name: "adder", source_code: "def predict(q): ..." })).model_ref;
  });
  afterAll(async () => {
    await t.close();
  });

  const get = async (path: string, query?: Record<string, string | string[]>) => {
    const res = await c.get(path, query);
    expect(res.statusCode, res.body).toBe(200);
    return res;
  };
  const calls = async (filter: Record<string, unknown>) => c.lines("/calls/stream_query", { project_id: P, filter });

  it("records a run with predictions and scores as an evaluation call tree and finishes it with score means", async () => {
    const runId = (await c.json(`${V2}/evaluation_runs`, { evaluation, model })).evaluation_run_id as string;
    expect((await get(`${V2}/evaluation_runs/${runId}`)).json()).toMatchObject({ evaluation_run_id: runId, evaluation, model, status: "running", finished_at: null, source_evaluation_run_id: null });

    const examples = [
      { inputs: { q: "1+1" }, output: "2", value: 1.0 },
      { inputs: { q: "2+2" }, output: "5", value: 0.0 },
    ];
    const predictionIds: string[] = [];
    for (const example of examples) {
      const predictionId = (await c.json(`${V2}/predictions`, { model, inputs: example.inputs, output: example.output, evaluation_run_id: runId })).prediction_id as string;
      predictionIds.push(predictionId);
      const scoreId = (await c.json(`${V2}/scores`, { prediction_id: predictionId, scorer, value: example.value, evaluation_run_id: runId })).score_id as string;
      expect((await get(`${V2}/scores/${scoreId}`)).json()).toMatchObject({ score_id: scoreId, scorer, value: example.value, evaluation_run_id: runId });
      expect((await c.post(`${V2}/predictions/${predictionId}/finish`, {})).json()).toEqual({ success: true });
      // Progress counts the run's finished predict_and_score calls against the dataset's rows.
      expect((await c.json("/evaluations/status", { project_id: P, call_id: runId })).status).toEqual({ code: "running", completed_rows: predictionIds.length, total_rows: 2 });
    }
    expect((await get(`${V2}/predictions/${predictionIds[0]}`)).json()).toMatchObject({ prediction_id: predictionIds[0], model, inputs: { q: "1+1" }, output: "2", evaluation_run_id: runId });
    expect(jsonLines((await get(`${V2}/predictions`, { evaluation_run_id: runId })).body).map((p: any) => p.prediction_id)).toEqual(predictionIds);
    expect(jsonLines((await get(`${V2}/scores`, { evaluation_run_id: runId })).body)).toHaveLength(2);

    // The call tree: run → predict_and_score → (adder.predict, exact_match.score).
    const [run] = await calls({ call_ids: [runId] });
    expect(run.op_name).toMatch(new RegExp(`^weave:///${P}/op/Evaluation.evaluate:`));
    expect(run.inputs).toEqual({ self: evaluation, model });
    const pas = await calls({ parent_ids: [runId] });
    expect(pas.map((call) => call.output)).toEqual([
      { output: "2", scores: { exact_match: 1 }, model_latency: { mean: expect.any(Number) } },
      { output: "5", scores: { exact_match: 0 }, model_latency: { mean: expect.any(Number) } },
    ]);
    const leaves = await calls({ parent_ids: [pas[0].id] });
    expect(leaves.map((call) => call.op_name.split("/").pop().split(":")[0]).sort()).toEqual(["adder.predict", "exact_match.score"]);
    // Each score is also runnable feedback on its prediction.
    const feedback = await c.json("/feedback/query", { project_id: P, query: { $expr: { $eq: [{ $getField: "weave_ref" }, { $literal: `weave:///${P}/call/${predictionIds[0]}` }] } } });
    expect(feedback.result).toEqual([expect.objectContaining({ feedback_type: "wandb.runnable.exact_match", payload: { output: 1 }, runnable_ref: scorer })]);

    expect((await c.post(`${V2}/evaluation_runs/${runId}/finish`, { summary: { note: "done" } })).json()).toEqual({ success: true });
    const finished = (await get(`${V2}/evaluation_runs/${runId}`)).json();
    expect(finished).toMatchObject({ status: "completed", finished_at: expect.any(String), summary: expect.objectContaining({ note: "done" }) });
    expect((await c.json("/evaluations/status", { project_id: P, call_id: runId })).status).toEqual({ code: "complete", output: { exact_match: { mean: 0.5 } } });
    const [ended] = await calls({ call_ids: [runId] });
    expect(ended.output).toEqual({ exact_match: { mean: 0.5 } });
    const summarize = (await calls({ parent_ids: [runId] })).filter((call) => call.op_name === "Evaluation.summarize");
    expect(summarize.map((call) => call.output)).toEqual([{ exact_match: { mean: 0.5 } }]);

    // eval_results groups the run's trials by dataset row.
    const results = await c.json(`${V2}/eval_results/query`, { evaluation_run_ids: [runId], include_raw_data_rows: true, include_summary: true, sort_by: [{ field: "scores.exact_match", direction: "desc" }] });
    expect(results.total_rows).toBe(2);
    expect(results.rows.map((row: any) => row.raw_data_row)).toEqual([{ q: "1+1" }, { q: "2+2" }]);
    expect(results.rows[0].evaluations[0].trials[0]).toMatchObject({ model_output: "2", scores: { exact_match: 1 }, predict_call_id: predictionIds[0] });
    expect(results.summary.evaluations[0]).toMatchObject({
      evaluation_call_id: runId,
      trial_count: 2,
      evaluation_ref: evaluation,
      model_ref: model,
      scorer_stats: [expect.objectContaining({ scorer_key: "exact_match", value_type: "continuous", numeric_mean: 0.5 })],
    });
    const filtered = await c.json(`${V2}/eval_results/query`, { evaluation_run_ids: [runId], filters: [{ query: { $expr: { $eq: [{ $getField: "output" }, { $literal: "5" }] } } }] });
    expect(filtered.rows.map((row: any) => row.evaluations[0].trials[0].model_output)).toEqual(["5"]);
  });

  it("lists runs by evaluation, model and id, and deletes them with their calls", async () => {
    const first = (await c.json(`${V2}/evaluation_runs`, { evaluation, model })).evaluation_run_id as string;
    const other = (await c.json(`${V2}/evaluation_runs`, { evaluation, model: `weave:///${P}/object/other:abc`, source_evaluation_run_id: first })).evaluation_run_id as string;
    const ids = async (query: Record<string, string | string[]>) => jsonLines((await get(`${V2}/evaluation_runs`, query)).body).map((run: any) => run.evaluation_run_id);
    expect(await ids({ evaluation_run_ids: `${first},${other}` })).toEqual([first, other]);
    expect(await ids({ evaluation_run_ids: [first, other], models: model })).toEqual([first]);
    expect(await ids({ evaluations: evaluation, evaluation_run_ids: other, limit: "1" })).toEqual([other]);
    // The Python client's names for the same filters, comma-joined or repeated.
    expect(await ids({ model_refs: model, evaluation_run_ids: [first, other] })).toEqual([first]);
    expect(await ids({ evaluation_refs: evaluation, model_refs: `${model},weave:///${P}/object/other:abc`, evaluation_run_ids: [first, other] })).toEqual([first, other]);
    expect(await ids({ evaluation_refs: `weave:///${P}/object/no-such-eval:abc`, evaluation_run_ids: [first, other] })).toEqual([]);
    expect((await get(`${V2}/evaluation_runs/${other}`)).json().source_evaluation_run_id).toBe(first);

    const prediction = (await c.json(`${V2}/predictions`, { model, inputs: {}, output: null, evaluation_run_id: first })).prediction_id as string;
    expect((await c.delete(`${V2}/evaluation_runs`, { evaluation_run_ids: [first, prediction, "missing"] })).json()).toEqual({ num_deleted: 1 });
    expect((await c.get(`${V2}/evaluation_runs/${first}`)).statusCode).toBe(404);
    // The run's descendants went with it.
    expect((await c.get(`${V2}/predictions/${prediction}`)).statusCode).toBe(404);
  });

  it("records standalone predictions and scores and deletes them by id", async () => {
    const prediction = (await c.json(`${V2}/predictions`, { model, inputs: { q: "3+3" }, output: "6" })).prediction_id as string;
    const [call] = await calls({ call_ids: [prediction] });
    expect(call).toMatchObject({ parent_id: null, trace_id: prediction, inputs: { self: model, inputs: { q: "3+3" } }, output: "6" });
    const score = (await c.json(`${V2}/scores`, { prediction_id: prediction, scorer, value: { correct: true } })).score_id as string;
    expect((await get(`${V2}/scores/${score}`)).json()).toMatchObject({ value: { correct: true }, evaluation_run_id: null });
    expect((await c.request({ method: "POST", url: `${V2}/predictions/${prediction}/finish` })).statusCode).toBe(200);
    expect((await get(`${V2}/predictions/${prediction}`)).json().output).toBe("6");
    expect((await c.delete(`${V2}/scores`, { score_ids: score })).json()).toEqual({ num_deleted: 1 });
    expect((await c.delete(`${V2}/predictions`, { prediction_ids: [prediction, prediction] })).json()).toEqual({ num_deleted: 1 });
    expect((await c.get(`${V2}/scores/${score}`)).statusCode).toBe(404);
  });

  it("answers bad refs with 400, unknown ids with 404 and other entities with 404", async () => {
    const prediction = (await c.json(`${V2}/predictions`, { model, inputs: {}, output: 1 })).prediction_id as string;
    expect((await c.post(`${V2}/evaluation_runs`, { evaluation: "not-a-ref", model })).statusCode).toBe(400);
    expect((await c.post(`${V2}/scores`, { prediction_id: prediction, scorer: `weave:///${P}/op/s:abc`, value: 1 })).statusCode).toBe(400);
    expect((await c.post(`${V2}/scores`, { prediction_id: "missing", scorer, value: 1 })).statusCode).toBe(404);
    expect((await c.post(`${V2}/predictions`, { model, inputs: {}, output: 1, evaluation_run_id: "missing" })).statusCode).toBe(404);
    expect((await c.post(`${V2}/evaluation_runs/missing/finish`, {})).statusCode).toBe(404);
    // A prediction is not a run, and a run is not a prediction.
    expect((await c.get(`${V2}/evaluation_runs/${prediction}`)).statusCode).toBe(404);
    expect((await c.post(`${V2}/eval_results/query`, {})).statusCode).toBe(400);
    expect((await c.post(`${V2}/eval_results/query`, { evaluation_call_ids: ["x"], sort_by: [{ field: "bogus" }] })).statusCode).toBe(400);
    const bob = traceClient(t, t.keys.bob);
    expect((await bob.get(`${V2}/predictions/${prediction}`)).statusCode).toBe(404);
    expect((await bob.get(`/v2/bob/runs/predictions/${prediction}`)).statusCode).toBe(404);
  });
});
