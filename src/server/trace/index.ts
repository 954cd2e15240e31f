import type { FastifyInstance } from "fastify";
import { requireApiKey } from "../auth.js";
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
  // Routes that answer without a key (health, version, server info, model catalogues) are
  // registered before the hook, in their own scope.
  await app.register(async (authed) => {
    authed.addHook("onRequest", requireApiKey(app.services.store, "trace", ["bearer", "basic"]));
    await authed.register(callRoutes);
    // refReader (expand_columns) is the objects side's ref reader, wired when both halves meet.
    await authed.register(callQueryRoutes, { refReader: undefined });
    // refReader (AnnotationSpec checks) and queues (queue_id checks) come from the objects side.
    await authed.register(feedbackRoutes, { refReader: undefined, queues: undefined });
    await authed.register(costRoutes);
    await authed.register(otelRoutes);
  });
}
