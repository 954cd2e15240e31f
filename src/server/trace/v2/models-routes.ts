import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { V2ObjectResources } from "../../../trace/v2-resources.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { pathProject, traceUserId } from "../common/project.js";
import { createdFields, DeleteQuery, digestsOf, headerFields, ListQuery, ObjectPath, pageOf, ProjectPath, VersionPath } from "./common.js";
import { DeleteRes, ModelCreateBody, ModelCreateRes, ModelRes } from "./protocol.js";

/**
 * /v2/{entity}/{project}/models: a Model object with its source file and attributes
 * (`docs/api/trace.md#v2-objects`).
 */
export async function v2ModelRoutes(app: FastifyInstance, options: { v2: V2ObjectResources }): Promise<void> {
  useLosslessJson(app);
  const { v2 } = options;
  const common = traceRoute("v2 models");
  const view = (model: Awaited<ReturnType<V2ObjectResources["readModel"]>>) => ({
    ...headerFields(model),
    name: model.name,
    description: model.description,
    source_code: model.sourceCode,
    attributes: model.attributes,
  });

  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/models", summary: "Create a model version", params: ProjectPath, body: ModelCreateBody, response: ModelCreateRes, ...common }, async ({ params, body }, request) => {
    const created = await v2.createModel(pathProject(request, params), { name: body.name, description: body.description, sourceCode: body.source_code, attributes: body.attributes }, traceUserId(request));
    return { ...createdFields(created), model_ref: created.modelRef };
  });

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/models/:object_id/versions/:digest", summary: "Read a model version", params: VersionPath, response: ModelRes, ...common }, async ({ params }, request) =>
    view(await v2.readModel(pathProject(request, params), params.object_id, params.digest)),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/models", summary: "List model versions as JSON Lines", params: ProjectPath, query: ListQuery, stream: ModelRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const models = await v2.listModels(pathProject(request, params), pageOf(query));
      return sendJsonLines(request, reply, models.map(view), stringifyJsonLossless);
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/models/:object_id", summary: "Delete model versions", params: ObjectPath, query: DeleteQuery, response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await v2.delete(pathProject(request, params), params.object_id, digestsOf(query)),
    }),
  );
}
