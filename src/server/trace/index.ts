import type { FastifyInstance } from "fastify";
import { type CallHeaderLookup, noCalls } from "../../store/trace/call-lookup.js";
import { createTraceObjectServices } from "../../store/trace/services.js";
import { requireApiKey } from "../auth.js";
import { annotationQueueRoutes } from "./annotation-queues-routes.js";
import { fileRoutes } from "./files-routes.js";
import { imageRoutes } from "./image-routes.js";
import { inferenceCatalogRoutes } from "./inference-routes.js";
import { labelRoutes } from "./labels-routes.js";
import { objectRoutes } from "./objects-routes.js";
import { refRoutes } from "./refs-routes.js";
import { tracePublicServiceRoutes, traceServiceRoutes } from "./service-routes.js";
import { tableRoutes } from "./tables-routes.js";
import { v2DatasetRoutes } from "./v2/datasets-routes.js";
import { v2EvaluationRoutes } from "./v2/evaluations-routes.js";
import { v2ModelRoutes } from "./v2/models-routes.js";
import { v2OpRoutes } from "./v2/ops-routes.js";
import { v2ScorerRoutes } from "./v2/scorers-routes.js";
import { callQueryRoutes } from "./calls-query-routes.js";
import { callRoutes } from "./calls-routes.js";
import { costRoutes } from "./costs-routes.js";
import { feedbackRoutes } from "./feedback-routes.js";
import { otelRoutes } from "./otel/routes.js";

/**
 * The Weave-compatible trace API, mounted at the configured base path (default /trace). Auth is
 * HTTP Basic `api:<key>` (any user name), Bearer, or a `wandb-api-key` header; errors are
 * `{"reason": "..."}` (`spec/trace.md` §1.2, §1.5). Each group of routes lives in a file of its own
 * and is registered here.
 */
export async function traceRoutes(app: FastifyInstance): Promise<void> {
  // Read at call time, so the calls store (or a test) can provide call headers after start.
  const calls: CallHeaderLookup = { findCalls: (projectId, ids) => (app.services.traceCalls ?? noCalls).findCalls(projectId, ids) };
  const trace = createTraceObjectServices(app.services.store, app.services.blobs, calls);
  // Routes that answer without a key (health, version, server info, model catalogues) are
  // registered before the hook, in their own scope.
  await app.register(tracePublicServiceRoutes);
  await app.register(inferenceCatalogRoutes);
  await app.register(async (authed) => {
    authed.addHook("onRequest", requireApiKey(app.services.store, "trace", ["bearer", "basic"]));
    await authed.register(traceServiceRoutes);
    await authed.register(objectRoutes, { trace });
    await authed.register(labelRoutes, { trace });
    await authed.register(tableRoutes, { trace });
    await authed.register(fileRoutes, { trace });
    await authed.register(refRoutes, { trace });
    await authed.register(annotationQueueRoutes, { queues: trace.annotationQueues });
    await authed.register(imageRoutes);
    await authed.register(v2OpRoutes, { v2: trace.v2 });
    await authed.register(v2DatasetRoutes, { v2: trace.v2 });
    await authed.register(v2ScorerRoutes, { v2: trace.v2 });
    await authed.register(v2EvaluationRoutes, { v2: trace.v2 });
    await authed.register(v2ModelRoutes, { v2: trace.v2 });
    await authed.register(callRoutes);
    // refReader (expand_columns) is the objects side's ref reader, wired when both halves meet.
    await authed.register(callQueryRoutes, { refReader: undefined });
    // refReader (AnnotationSpec checks) and queues (queue_id checks) come from the objects side.
    await authed.register(feedbackRoutes, { refReader: undefined, queues: undefined });
    await authed.register(costRoutes);
    await authed.register(otelRoutes);
  });
}
