import type { FastifyInstance } from "fastify";
import { listModels } from "../../../store/models.js";
import { principalOf } from "../../auth.js";
import { defineRoute } from "../../routes.js";
import type { ChatRouting } from "../routing.js";
import { type ModelCard, ModelListRes, type ModelListResponse } from "./protocol.js";

/**
 * The served base models (built-in and upstream), the caller's registered models and the adapters
 * the caller loaded at run time, in the OpenAI list shape.
 */
export function modelListRoute(app: FastifyInstance, routing: ChatRouting): void {
  const { store, catalog } = app.services;
  defineRoute(
    app,
    { method: "GET", url: "/models", summary: "List models usable as `model` in chat completions", tags: ["chat"], response: ModelListRes, errorStyle: "openai", security: "bearer" },
    async (_input, request): Promise<ModelListResponse> => {
      const { entity } = principalOf(request);
      const base = catalog.list().map((entry): ModelCard => ({ id: entry.id, object: "model", created: entry.created, owned_by: "flywheel", root: entry.id, parent: null }));
      const upstreamOnly = routing.upstreams
        .ids()
        .filter((id) => !catalog.get(id))
        .map((id): ModelCard => ({ id, object: "model", created: 0, owned_by: "upstream", root: id, parent: null }));
      const loaded = routing.runtimeAdapters.list(entity).map((adapter): ModelCard => ({ id: adapter.name, object: "model", created: adapter.created, owned_by: entity, root: adapter.dir, parent: adapter.baseModelId }));
      const registered = (await listModels(store.db, entity)).map(
        (model): ModelCard => ({
          id: `wandb-artifact:///${model.entity}/${model.project}/${model.name}`,
          object: "model",
          created: Math.floor(Date.parse(model.created_at) / 1000),
          owned_by: model.entity,
          root: model.base_model,
          parent: model.base_model,
        }),
      );
      return { object: "list", data: [...base, ...upstreamOnly, ...registered, ...loaded] };
    },
  );
}
