import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { listModels } from "../../store/models.js";
import { principalOf } from "../auth.js";
import { defineRoute } from "../routes.js";

const ModelCard = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.string(),
  root: z.string(),
  parent: z.string().nullable(),
});
const ModelListRes = z.object({ object: z.literal("list"), data: z.array(ModelCard) });

/** The served base models and the caller's registered models, in the OpenAI list shape. */
export async function modelListRoute(app: FastifyInstance): Promise<void> {
  const { store, catalog } = app.services;
  defineRoute(
    app,
    { method: "GET", url: "/models", summary: "List models usable as `model` in chat completions", tags: ["chat"], response: ModelListRes, errorStyle: "openai", security: "bearer" },
    async (_input, request) => {
      const base = catalog.list().map((entry) => ({ id: entry.id, object: "model" as const, created: entry.created, owned_by: "flywheel", root: entry.id, parent: null }));
      const registered = (await listModels(store.db, principalOf(request).entity)).map((model) => ({
        id: `wandb-artifact:///${model.entity}/${model.project}/${model.name}`,
        object: "model" as const,
        created: Math.floor(Date.parse(model.created_at) / 1000),
        owned_by: model.entity,
        root: model.base_model,
        parent: model.base_model,
      }));
      return { object: "list", data: [...base, ...registered] };
    },
  );
}
