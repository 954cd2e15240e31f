import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { V2ObjectResources } from "../../../trace/v2-resources.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { pathProject, traceUserId } from "../common/project.js";
import { createdFields, DeleteQuery, digestsOf, headerFields, ListQuery, ObjectPath, pageOf, ProjectPath, VersionPath } from "./common.js";
import { CreatedRes, DatasetCreateBody, DatasetRes, DeleteRes } from "./protocol.js";

/** /v2/{entity}/{project}/datasets: a Dataset object over a table of rows (`docs/api/trace.md#v2-objects`). */
export async function v2DatasetRoutes(app: FastifyInstance, options: { v2: V2ObjectResources }): Promise<void> {
  useLosslessJson(app);
  const { v2 } = options;
  const common = traceRoute("v2 datasets");
  const view = (dataset: Awaited<ReturnType<V2ObjectResources["readDataset"]>>) => ({ ...headerFields(dataset), name: dataset.name, description: dataset.description, rows: dataset.rows });

  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/datasets", summary: "Create a dataset version", params: ProjectPath, body: DatasetCreateBody, response: CreatedRes, ...common }, async ({ params, body }, request) =>
    createdFields(await v2.createDataset(pathProject(request, params), { name: body.name, description: body.description, rows: body.rows }, traceUserId(request))),
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/datasets/:object_id/versions/:digest", summary: "Read a dataset version", params: VersionPath, response: DatasetRes, ...common }, async ({ params }, request) =>
    view(await v2.readDataset(pathProject(request, params), params.object_id, params.digest)),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/datasets", summary: "List dataset versions as JSON Lines", params: ProjectPath, query: ListQuery, stream: DatasetRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const datasets = await v2.listDatasets(pathProject(request, params), pageOf(query));
      return sendJsonLines(request, reply, datasets.map(view), stringifyJsonLossless);
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/datasets/:object_id", summary: "Delete dataset versions", params: ObjectPath, query: DeleteQuery, response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await v2.delete(pathProject(request, params), params.object_id, digestsOf(query)),
    }),
  );
}
