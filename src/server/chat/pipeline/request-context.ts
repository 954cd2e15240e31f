import type { FastifyInstance, FastifyRequest } from "fastify";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";
import type { ChatRouting } from "../routing.js";
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

/**
 * Only chat completions are forwarded to an upstream server (FLYWHEEL_UPSTREAMS); the other
 * surfaces run on the built-in engine, so a model served upstream is refused there, clearly.
 */
export async function refuseUpstreamModel(routing: ChatRouting, model: string | null | undefined, ctx: PrepareContext, surface: string): Promise<void> {
  if (await routing.upstreams.target(model, ctx)) {
    throw new ApiError(501, `The model \`${model}\` is served by an upstream server, which only ${"`/v1/chat/completions`"} reaches; ${surface} is not forwarded.`, { type: "NotImplementedError", param: "model" });
  }
}
