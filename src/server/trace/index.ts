import type { FastifyInstance } from "fastify";
import { createTraceObjectServices } from "../../store/trace/services.js";
import { requireApiKey } from "../auth.js";
import { fileRoutes } from "./files-routes.js";
import { labelRoutes } from "./labels-routes.js";
import { objectRoutes } from "./objects-routes.js";
import { refRoutes } from "./refs-routes.js";
import { tracePublicServiceRoutes, traceServiceRoutes } from "./service-routes.js";
import { tableRoutes } from "./tables-routes.js";

/**
 * The Weave-compatible trace API, mounted at the configured base path (default /trace). Auth is
 * HTTP Basic `api:<key>` (any user name), Bearer, or a `wandb-api-key` header; errors are
 * `{"reason": "..."}` (`spec/trace.md` §1.2, §1.5). Each group of routes lives in a file of its own
 * and is registered here.
 */
export async function traceRoutes(app: FastifyInstance): Promise<void> {
  const trace = createTraceObjectServices(app.services.store, app.services.blobs);
  // Routes that answer without a key (health, version, server info, model catalogues) are
  // registered before the hook, in their own scope.
  await app.register(tracePublicServiceRoutes);
  await app.register(async (authed) => {
    authed.addHook("onRequest", requireApiKey(app.services.store, "trace", ["bearer", "basic"]));
    await authed.register(traceServiceRoutes);
    await authed.register(objectRoutes, { trace });
    await authed.register(labelRoutes, { trace });
    await authed.register(tableRoutes, { trace });
    await authed.register(fileRoutes, { trace });
    await authed.register(refRoutes, { trace });
  });
}
