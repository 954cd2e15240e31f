import type { FastifyInstance } from "fastify";
import { createTraceServices } from "../../trace/services.js";
import { requireApiKey } from "../auth.js";
import { annotationQueueRoutes } from "./annotation-queues/routes.js";
import { callQueryRoutes } from "./calls/query-routes.js";
import { callRoutes } from "./calls/routes.js";
import { costRoutes } from "./costs/routes.js";
import type { ModelCaller } from "../model-caller.js";
import { evaluationRoutes } from "./evaluations/routes.js";
import { feedbackRoutes } from "./feedback/routes.js";
import { fileRoutes } from "./files/routes.js";
import { imageRoutes } from "./images/routes.js";
import { inferenceCatalogRoutes } from "./inference/routes.js";
import { labelRoutes } from "./labels/routes.js";
import { objectRoutes } from "./objects/routes.js";
import { otelRoutes } from "./otel/routes.js";
import { refRoutes } from "./refs/routes.js";
import { useTraceErrors } from "./common/scope.js";
import { tracePublicServiceRoutes, traceServiceRoutes } from "./service/routes.js";
import { tableRoutes } from "./tables/routes.js";
import { v2DatasetRoutes } from "./v2/datasets-routes.js";
import { v2EvalResultsRoutes } from "./v2/eval-results-routes.js";
import { v2EvaluationRunRoutes } from "./v2/evaluation-runs-routes.js";
import { v2EvaluationRoutes } from "./v2/evaluations-routes.js";
import { v2ModelRoutes } from "./v2/models-routes.js";
import { v2OpRoutes } from "./v2/ops-routes.js";
import { v2PredictionRoutes } from "./v2/predictions-routes.js";
import { v2ScorerRoutes } from "./v2/scorers-routes.js";

/**
 * The Weave-compatible trace API, mounted at the configured base path (default /trace). Auth is HTTP Basic
 * `api:<key>` (any user name), Bearer, or a `wandb-api-key` header; errors are `{"reason": "..."}`
 * (`docs/api/trace.md#auth`, `docs/api/trace.md#errors`). Each group of routes lives in a file of its own and
 * is registered here, on one set of trace services.
 */
export async function traceRoutes(app: FastifyInstance, options: { models: ModelCaller }): Promise<void> {
  const trace = createTraceServices(app.services.store, app.services.blobs);
  // Routes that answer without a key (health, version, the clients' version check, geolocation)
  // are registered before the hook, in their own scope; everything that tells about the machine
  // or the models served needs a key.
  await app.register(tracePublicServiceRoutes);
  await app.register(async (authed) => {
    authed.addHook("onRequest", requireApiKey(app.services.store, "trace", ["bearer", "basic"]));
    useTraceErrors(authed);
    await authed.register(inferenceCatalogRoutes);
    await authed.register(traceServiceRoutes);
    await authed.register(objectRoutes, { trace });
    await authed.register(labelRoutes, { trace });
    await authed.register(tableRoutes, { trace });
    await authed.register(fileRoutes, { trace });
    await authed.register(refRoutes, { trace });
    await authed.register(annotationQueueRoutes, { queues: trace.annotationQueues });
    await authed.register(imageRoutes, { trace });
    await authed.register(v2OpRoutes, { v2: trace.v2 });
    await authed.register(v2DatasetRoutes, { v2: trace.v2 });
    await authed.register(v2ScorerRoutes, { v2: trace.v2 });
    await authed.register(v2EvaluationRoutes, { v2: trace.v2 });
    await authed.register(v2ModelRoutes, { v2: trace.v2 });
    await authed.register(v2EvaluationRunRoutes, { trace });
    await authed.register(v2PredictionRoutes, { trace });
    await authed.register(v2EvalResultsRoutes, { trace });
    await authed.register(callRoutes, { trace });
    await authed.register(callQueryRoutes, { trace });
    await authed.register(feedbackRoutes, { calls: trace.calls, refs: trace.refs, queues: trace.annotationQueues });
    await authed.register(costRoutes, { trace });
    await authed.register(otelRoutes, { trace });
    await authed.register(evaluationRoutes, { trace, models: options.models });
  });
}
