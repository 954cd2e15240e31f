import type { FastifyInstance } from "fastify";
import { stepsNeededByActiveJobs } from "../../../store/checkpoint-guard.js";
import { deleteCheckpointSteps, pageCheckpoints } from "../../../store/checkpoints.js";
import { createModel, deleteModel } from "../../../store/models.js";
import { principalOf } from "../../auth.js";
import { ApiError, conflict } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { resolveModelSource } from "./model-source.js";
import { modelView } from "./model-view.js";
import { ownModel } from "../common/own-model.js";
import { RequestValidationError } from "../../validation.js";
import { cursorPageOf } from "../common/schemas.js";
import { CheckpointDeleteReq, CheckpointDeleteRes, CheckpointItem, CheckpointListQuery, ModelCreateReq, ModelDeleteRes, ModelIdParams, ModelRes } from "./protocol.js";

const tags = ["training"];

/**
 * The trainable-model registry and its checkpoints (`docs/api/training.md#register-model`,
 * `docs/api/training.md#delete-model`, `docs/api/training.md#list-checkpoints`,
 * `docs/api/training.md#delete-checkpoints`).
 */
export async function modelRoutes(app: FastifyInstance): Promise<void> {
  const { store, catalog } = app.services;

  defineRoute(app, { method: "POST", url: "/preview/models", summary: "Register a trainable model", tags, body: ModelCreateReq, response: ModelRes, security: "bearer" }, async ({ body }, request, reply) => {
    const { entity } = principalOf(request);
    if (body.entity && body.entity !== entity) {
      throw new ApiError(403, `This API key belongs to entity '${entity}' and cannot create models for entity '${body.entity}'`);
    }
    const source = await resolveModelSource(store.db, catalog, entity, body.base_model);
    if (source.forkedFrom && body.lora_config) {
      throw RequestValidationError.single(["body", "lora_config"], "A fork keeps the LoRA configuration of the checkpoint it starts from; leave lora_config out");
    }
    const loraConfig = source.forkedFrom ? source.loraConfig : body.lora_config ? JSON.stringify(body.lora_config) : null;
    const result = await createModel(
      store.db,
      {
        entity,
        project: body.project,
        name: body.name,
        base_model: source.baseModel,
        forked_from: source.forkedFrom && JSON.stringify(source.forkedFrom),
        lora_config: loraConfig,
      },
      source.initial,
    );
    if (!result.created && !body.return_existing) {
      throw conflict(`Model '${body.name}' already exists in project '${body.project}'; pass return_existing: true to reuse it`);
    }
    reply.code(200);
    return modelView(result.model);
  });

  defineRoute(
    app,
    { method: "GET", url: "/preview/models/:model_id", summary: "Read a model: its base, its lineage and its LoRA configuration", tags, params: ModelIdParams, response: ModelRes, security: "bearer" },
    async ({ params }, request) => modelView(await ownModel(store.db, principalOf(request).entity, params.model_id)),
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/preview/models/:model_id", summary: "Delete a model and all its checkpoints; its queued and running jobs are cancelled", tags, params: ModelIdParams, response: ModelDeleteRes, security: "bearer" },
    async ({ params }, request) => {
      const model = await ownModel(store.db, principalOf(request).entity, params.model_id);
      const { deletedCheckpoints } = await deleteModel(store.db, model.id);
      return { model_id: model.id, deleted_checkpoints: deletedCheckpoints, deleted_run: true };
    },
  );

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/models/:model_id/checkpoints",
      summary: "List a model's checkpoints (cursor page ordered by step)",
      tags,
      params: ModelIdParams,
      query: CheckpointListQuery,
      response: cursorPageOf(CheckpointItem),
      security: "bearer",
    },
    async ({ params, query }, request) => {
      const model = await ownModel(store.db, principalOf(request).entity, params.model_id);
      return pageCheckpoints(store.db, model.id, query);
    },
  );

  defineRoute(
    app,
    {
      method: "DELETE",
      url: "/preview/models/:model_id/checkpoints",
      summary: "Delete checkpoints by step",
      tags,
      params: ModelIdParams,
      body: CheckpointDeleteReq,
      response: CheckpointDeleteRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const model = await ownModel(store.db, principalOf(request).entity, params.model_id);
      const needed = await stepsNeededByActiveJobs(store.db, model.id);
      const refused = [...new Set(body.steps)].filter((step) => needed.has(step));
      if (refused.length > 0) {
        // 409 is retried by the OpenAI-based clients on DELETE; this conflict lasts until the jobs end.
        throw new ApiError(409, `Checkpoint step(s) ${refused.join(", ")} are needed by a queued or running training job of this model; retry after it ends`, {
          type: "ConflictError",
          headers: { "x-should-retry": "false" },
        });
      }
      const { deletedCount, notFoundSteps } = await deleteCheckpointSteps(store.db, model.id, body.steps);
      return { deleted_count: deletedCount, not_found_steps: notFoundSteps };
    },
  );
}
