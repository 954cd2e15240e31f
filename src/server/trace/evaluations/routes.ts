import type { FastifyInstance, FastifyRequest } from "fastify";
import { TraceNotFound } from "../../../store/trace/errors.js";
import { readCalls } from "../../../trace/evaluations/call-writes.js";
import { evaluationStatus } from "../../../trace/evaluations/status.js";
import type { TraceServices } from "../../../trace/services.js";
import { principalOf } from "../../auth.js";
import type { ModelCaller } from "../../model-caller.js";
import { defineRoute } from "../../routes.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { EmptyRes } from "../common/schemas.js";
import { CallsScoreReq, EvaluateModelReq, EvaluateModelRes, EvaluationStatusReq, EvaluationStatusRes } from "./protocol.js";
import { traceRoute } from "../common/scope.js";
import { scoreCalls } from "./call-scoring.js";
import { BackgroundJobs } from "./jobs.js";
import type { LlmModel } from "./llm-model.js";
import { loadEvaluationPlan, loadScorers } from "./plan.js";
import { CallRecorder } from "./recorder.js";
import { runEvaluation, startEvaluation } from "./runner.js";
import type { Scorer } from "./scorers.js";

/**
 * Evaluations run by the server on its own engine (`docs/api/trace.md#evaluations`;
 * docs/decisions/trace.md#D-TRACE-051): `/evaluations/evaluate_model` checks the evaluation and the model,
 * starts the `Evaluation.evaluate` call and answers with its id while the rows run in the
 * background; `/evaluations/status` reads progress from the calls; `/calls/score` applies
 * scorers to existing calls in the background.
 */
export async function evaluationRoutes(app: FastifyInstance, options: { trace: TraceServices; models: ModelCaller }): Promise<void> {
  const { trace, models: caller } = options;
  const jobs = new BackgroundJobs(app.log);
  app.addHook("onClose", () => jobs.close());
  const common = traceRoute("evaluations");

  /** What the chat endpoint would do for this caller, as the models' runner. */
  const recorderFor = (request: FastifyRequest, projectId: string) => {
    const { entity } = principalOf(request);
    const recorder = new CallRecorder(trace, projectId, traceUserId(request), (body, signal) => caller.complete(entity, body, signal), jobs.signal);
    /** Every model a run will call must resolve now, so a typo is a 404 rather than a failed run. */
    const checkModels = async (models: LlmModel[]) => {
      for (const modelId of new Set(models.map((model) => model.modelId))) await caller.check(entity, modelId);
    };
    return { recorder, checkModels };
  };
  const judgeModels = (scorers: Scorer[]) => scorers.flatMap((scorer) => (scorer.kind === "judge" ? [scorer.model] : []));

  defineRoute(app, { method: "POST", url: "/evaluations/evaluate_model", summary: "Run a stored evaluation against a served model", body: EvaluateModelReq, response: EvaluateModelRes, ...common }, async ({ body }, request) => {
    const { projectId, entity } = resolveProject(request, body.project_id);
    const plan = await loadEvaluationPlan(trace, entity, body.evaluation_ref, body.model_ref);
    const { recorder, checkModels } = recorderFor(request, projectId);
    await checkModels([plan.model, ...judgeModels(plan.scorers)]);
    const root = await startEvaluation(recorder, plan);
    jobs.start(`evaluation ${root.id}`, (signal) => runEvaluation(recorder, plan, root, signal));
    return { call_id: root.id };
  });

  defineRoute(app, { method: "POST", url: "/evaluations/status", summary: "Progress of an evaluation", body: EvaluationStatusReq, response: EvaluationStatusRes, ...common }, async ({ body }, request) => ({
    status: await evaluationStatus(trace, resolveProject(request, body.project_id).projectId, body.call_id),
  }));

  defineRoute(app, { method: "POST", url: "/calls/score", summary: "Score calls with stored scorers", body: CallsScoreReq, response: EmptyRes, ...common }, async ({ body }, request) => {
    const { projectId, entity } = resolveProject(request, body.project_id);
    const ids = [...new Set(body.call_ids)];
    const calls = await readCalls(trace.calls, { projectId, filter: { call_ids: ids } });
    const missing = ids.filter((id) => !calls.some((call) => call.id === id));
    if (missing.length > 0) throw new TraceNotFound(`Calls not found: ${missing.join(", ")}`);
    const scorers = await loadScorers(trace, entity, body.scorer_refs);
    const { recorder, checkModels } = recorderFor(request, projectId);
    await checkModels(judgeModels(scorers));
    jobs.start(`scoring in ${projectId}`, (signal) => scoreCalls(trace, recorder, calls, scorers, traceUserId(request), signal));
    return {};
  });
}
