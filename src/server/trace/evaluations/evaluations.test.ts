import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModel } from "../../../store/models.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";
import { eventually, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/evals";
const BASES = { model: ["Model", "Object", "BaseModel"], scorer: ["Scorer", "Object", "BaseModel"], object: ["Object", "BaseModel"] };
const opName = (call: { op_name: string }) => call.op_name.replace(/^weave:\/\/\/[^/]+\/[^/]+\/op\//, "").replace(/:.*$/, "");

/**
 * Evaluations run by the server on its engine (a tiny fixture model in an engine thread): a stored
 * Evaluation of a dataset and scorers against a served model, recorded as the SDKs record theirs,
 * with progress, and scorers applied to existing calls.
 */
describe.each(testDialects)("server-side evaluations on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  const refs: Record<string, string> = {};
  const publish = async (objectId: string, val: unknown) => {
    refs[objectId] = `weave:///${P}/object/${objectId}:${(await c.json("/obj/create", { obj: { project_id: P, object_id: objectId, val } })).digest}`;
    return refs[objectId]!;
  };
  const chatModel = (id: string, params: Record<string, unknown>) => ({ _type: "LLMStructuredCompletionModel", _class_name: "LLMStructuredCompletionModel", _bases: BASES.model, llm_model_id: id, default_params: params });
  const evaluationOf = (scorers: string[]) => ({ _type: "Evaluation", _class_name: "Evaluation", _bases: BASES.object, name: "arith", dataset: refs.dataset, scorers, trials: 1, evaluation_name: "tiny-eval" });

  beforeAll(async () => {
    t = await startTestApp(dialect, { servedModels: { "test/tiny": tinyModel("qwen2").dir } });
    await createModel(t.store.db, { entity: "alice", project: "proj", name: "agent", base_model: "test/tiny" });
    c = traceClient(t, t.keys.alice);
    const rows = [
      { question: "2+2?", target: "4" },
      { question: "3+3?", target: "6" },
      { question: "1+1?", target: "2", user_input: [{ role: "user", content: "Be brief." }] },
    ];
    const table = await c.json("/table/create", { table: { project_id: P, rows } });
    await publish("dataset", { _type: "Dataset", _class_name: "Dataset", _bases: BASES.object, name: "arith", rows: `weave:///${P}/table/${table.digest}` });
    await publish("answerer", chatModel("test/tiny", { messages_template: [{ role: "user", content: "Question: {question}" }], temperature: 0.0, max_tokens: 8 }));
    const rating = { type: "json_schema", json_schema: { name: "rating", schema: { type: "object", properties: { score: { enum: [1, 2, 3, 4, 5] } }, required: ["score"], additionalProperties: false } } };
    await publish("judge-model", chatModel("test/tiny", { temperature: 0.0, max_tokens: 40, response_format: rating }));
    await publish("judge", {
      _type: "LLMAsAJudgeScorer",
      _class_name: "LLMAsAJudgeScorer",
      _bases: BASES.scorer,
      name: "judge",
      column_map: null,
      model: refs["judge-model"],
      scoring_prompt: "Question: {question}\nAnswer: {output}\nRate the answer from 1 to 5.",
    });
    await publish("exact", { _type: "ExactMatchScorer", _class_name: "ExactMatchScorer", _bases: BASES.scorer, name: "exact", column_map: null });
    await publish("contains", { _type: "StringMatchScorer", _class_name: "StringMatchScorer", _bases: BASES.scorer, name: "contains", column_map: { target: "question" } });
    await publish("evaluation", evaluationOf([refs.exact!, refs.contains!, refs.judge!]));
  });
  afterAll(async () => {
    await t.close();
  });

  const calls = (filter: Record<string, unknown>) => c.lines("/calls/stream_query", { project_id: P, filter });
  const status = async (callId: string) => (await c.json("/evaluations/status", { project_id: P, call_id: callId })).status;
  const finished = (callId: string) => eventually(async () => ((await status(callId)).code === "running" ? undefined : status(callId)), `evaluation ${callId}`);
  const evaluate = (modelRef: string, evaluationRef = refs.evaluation) => c.post("/evaluations/evaluate_model", { project_id: P, evaluation_ref: evaluationRef, model_ref: modelRef });

  it("runs the evaluation on the engine and records it as an SDK-run evaluation", async () => {
    const callId = (await c.json("/evaluations/evaluate_model", { project_id: P, evaluation_ref: refs.evaluation, model_ref: refs.answerer })).call_id as string;
    const done = await finished(callId);
    expect(done.code).toBe("complete");

    const [root] = await calls({ call_ids: [callId] });
    expect(root).toMatchObject({ display_name: "tiny-eval", inputs: { self: refs.evaluation, model: refs.answerer }, exception: null });
    expect(opName(root)).toBe("Evaluation.evaluate");
    const children = await calls({ parent_ids: [callId] });
    expect(children.map(opName)).toEqual(["Evaluation.predict_and_score", "Evaluation.predict_and_score", "Evaluation.predict_and_score", "Evaluation.summarize"]);

    const scored = [];
    for (const pas of children.slice(0, 3)) {
      const leaves = await calls({ parent_ids: [pas.id] });
      expect(leaves.map(opName)).toEqual(["LLMStructuredCompletionModel.predict", "ExactMatchScorer.score", "StringMatchScorer.score", "LLMAsAJudgeScorer.score"]);
      const [predict, exact, contains, judge] = leaves;
      expect(predict.summary.usage["test/tiny"]).toMatchObject({ requests: 1, completion_tokens: expect.any(Number) });
      const row = await c.json("/refs/read_batch", { refs: [pas.inputs.example] }).then((res) => res.vals[0]);
      expect(pas.inputs.example).toMatch(new RegExp(`^${refs.dataset}/attr/rows/id/`));
      // The model ran through the chat endpoint's path: the same greedy reply as a direct request.
      const messages = [{ role: "user", content: `Question: ${row.question}` }, ...(row.user_input ?? [])];
      const direct = await t.request(t.keys.alice, { method: "POST", url: "/v1/chat/completions", payload: { model: "test/tiny", messages, temperature: 0, max_tokens: 8 } });
      expect(predict.output).toBe(direct.json().choices[0].message.content);
      expect(exact.output).toEqual({ exact_match: predict.output.trim() === row.target });
      expect(contains.output).toEqual({ string_in_input: row.question.toLowerCase().includes(predict.output.toLowerCase()) });
      expect([1, 2, 3, 4, 5]).toContain(judge.output.score);
      const [judgePredict] = await calls({ parent_ids: [judge.id] });
      expect(judgePredict.inputs).toMatchObject({ self: refs["judge-model"], user_input: [{ role: "user", content: `Question: ${row.question}\nAnswer: ${predict.output}\nRate the answer from 1 to 5.` }] });
      expect(pas.output).toEqual({ output: predict.output, scores: { exact: exact.output, contains: contains.output, judge: judge.output }, model_latency: expect.any(Number) });
      scored.push(pas.output.scores);
    }
    const trues = scored.filter((scores) => scores.exact.exact_match).length;
    expect(done.output).toMatchObject({ exact: { exact_match: { true_count: trues, true_fraction: trues / 3 } }, judge: { score: { mean: expect.any(Number) } }, model_latency: { mean: expect.any(Number) } });
    expect(children[3].output).toEqual(done.output);

    // eval_results reads the run like any SDK-run evaluation, with the dataset rows resolved.
    const results = await c.json("/v2/alice/evals/eval_results/query", { evaluation_call_ids: [callId], include_raw_data_rows: true, resolve_row_refs: true, include_summary: true });
    expect(results.total_rows).toBe(3);
    expect(results.rows.map((row: any) => row.raw_data_row.question).sort()).toEqual(["1+1?", "2+2?", "3+3?"]);
    expect(results.rows[0].evaluations[0].trials[0]).toMatchObject({ predict_call_id: expect.any(String), total_tokens: expect.any(Number), model_latency_seconds: expect.any(Number) });
    expect(results.summary.evaluations[0].scorer_stats.map((stats: any) => `${stats.scorer_key}.${stats.path}`).sort()).toEqual(["contains.string_in_input", "exact.exact_match", "judge.score"]);
  });

  it("runs against a trained model named directly, recording the rows it could not send", async () => {
    const simple = await publish("simple-evaluation", evaluationOf([refs.exact!]));
    const callId = (await (await evaluate("wandb-artifact:///alice/proj/agent", simple)).json()).call_id as string;
    expect((await finished(callId)).code).toBe("complete");
    const predicts = [];
    for (const pas of (await calls({ parent_ids: [callId] })).slice(0, 3)) predicts.push(...(await calls({ parent_ids: [pas.id] })).filter((call) => opName(call).endsWith(".predict")));
    // Only the row with user_input had messages to send; the others say why they failed.
    expect(predicts.map((call) => call.exception === null)).toEqual([false, false, true]);
    expect(predicts[0].exception).toMatch(/no messages_template and the input has no user_input/);
    expect(predicts[2].inputs.self).toBe("wandb-artifact:///alice/proj/agent");
  });

  it("refuses what it cannot run before starting", async () => {
    const reason = async (res: Promise<{ statusCode: number; json(): any }>, status: number) => {
      const answer = await res;
      expect(answer.statusCode).toBe(status);
      return answer.json().reason as string;
    };
    expect(await reason(evaluate("no/such-model"), 404)).toMatch(/does not exist/);
    expect(await reason(evaluate("wandb-artifact:///bob/proj/agent"), 404)).toMatch(/does not exist/);
    expect(await reason(evaluate(refs.answerer!, refs.dataset), 400)).toMatch(/expected Evaluation/);
    expect(await reason(evaluate(refs.answerer!, `weave:///${P}/object/missing:latest`), 404)).toMatch(/not found/);
    expect(await reason(evaluate(refs.dataset!), 400)).toMatch(/expected LLMStructuredCompletionModel/);
    const custom = await publish("custom-scorer", { _type: "MyScorer", _class_name: "MyScorer", _bases: BASES.scorer, name: "mine" });
    expect(await reason(evaluate(refs.answerer!, await publish("custom-evaluation", evaluationOf([custom]))), 400)).toMatch(/cannot run on this server/);
    expect(await reason(c.post("/evaluations/status", { project_id: P, call_id: (await calls({})).find((call) => opName(call) === "Evaluation.summarize").id }), 400)).toMatch(/not an evaluation/);
    expect(await status("no-such-call")).toEqual({ code: "not_found" });
    expect((await traceClient(t, t.keys.bob).post("/evaluations/evaluate_model", { project_id: P, evaluation_ref: refs.evaluation, model_ref: "test/tiny" })).statusCode).toBe(404);
  });

  it("scores existing calls with stored scorers as feedback", async () => {
    const target = (await calls({})).find((call) => opName(call) === "LLMStructuredCompletionModel.predict" && call.exception === null)!;
    expect(await c.json("/calls/score", { project_id: P, call_ids: [target.id], scorer_refs: [refs.judge, refs.exact] })).toEqual({});
    const feedback = await eventually(async () => {
      const found = await c.json("/feedback/query", { project_id: P, query: { $expr: { $eq: [{ $getField: "weave_ref" }, { $literal: `weave:///${P}/call/${target.id}` }] } } });
      return found.result.length === 2 ? found.result : undefined;
    }, "scoring feedback");
    expect(feedback.map((row: any) => row.feedback_type).sort()).toEqual(["wandb.runnable.exact", "wandb.runnable.judge"]);
    // The scored call's inputs are the scorer's columns: its `target` is what exact match compares with.
    const exact = feedback.find((row: any) => row.feedback_type === "wandb.runnable.exact");
    expect(exact).toMatchObject({ runnable_ref: refs.exact, payload: { output: { exact_match: target.output.trim() === target.inputs.target } } });
    const [scorerCall] = await calls({ call_ids: [exact.call_ref.split("/").pop()] });
    expect(scorerCall).toMatchObject({ parent_id: null, inputs: { self: refs.exact, output: target.output, target: target.inputs.target } });
    expect(opName(scorerCall)).toBe("ExactMatchScorer.score");
    const judge = feedback.find((row: any) => row.feedback_type === "wandb.runnable.judge");
    expect([1, 2, 3, 4, 5]).toContain(judge.payload.output.score);
    expect((await c.post("/calls/score", { project_id: P, call_ids: ["missing"], scorer_refs: [refs.exact] })).statusCode).toBe(404);
  });
});
