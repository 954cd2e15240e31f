import type { FastifyInstance } from "fastify";
import type { ModelCaller } from "../../model-caller.js";
import type { PrepareContext } from "../pipeline/prepare.js";
import { chatRequestOf, checkChatModel, completeChat } from "./serving.js";

/** The chat completions pipeline as a `ModelCaller`: what the endpoint would do for that entity. */
export function chatModelCaller(app: FastifyInstance): ModelCaller {
  const contextFor = (entity: string): PrepareContext => {
    const { store, blobs, config, catalog, engines } = app.services;
    return { entity, headerRequestId: undefined, engines, resolver: { db: store.db, blobs, dataDir: config.dataDir, catalog }, limits: config.chat };
  };
  return {
    complete: (entity, body, signal) => completeChat(chatRequestOf(body), contextFor(entity), signal),
    check: (entity, model) => checkChatModel(model, contextFor(entity)),
  };
}
