import type { FastifyInstance, FastifyRequest } from "fastify";
import { principalOf } from "../auth.js";
import type { ChatRouting } from "./index.js";
import type { PrepareContext } from "./prepare.js";

/** What every inference surface needs to resolve and run a request: the caller, the engines, the model registry, the limits. */
export function prepareContextOf(app: FastifyInstance, routing: ChatRouting, request: FastifyRequest): PrepareContext {
  const { store, blobs, catalog, config } = app.services;
  const headerRequestId = request.headers["x-request-id"];
  return {
    entity: principalOf(request).entity,
    headerRequestId: typeof headerRequestId === "string" ? headerRequestId : undefined,
    engines: app.services.engines,
    resolver: { db: store.db, blobs, dataDir: config.dataDir, catalog },
    runtimeAdapters: routing.runtimeAdapters,
    limits: config.chat,
  };
}
