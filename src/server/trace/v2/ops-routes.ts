import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { V2ObjectResources } from "../../../trace/v2-resources.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { pathProject, traceUserId } from "../common/project.js";
import { createdFields, DeleteQuery, digestsOf, headerFields, ListQuery, ObjectPath, pageOf, ProjectPath, VersionPath } from "./common.js";
import { CreatedRes, DeleteRes, OpCreateBody, OpRes } from "./protocol.js";

/** /v2/{entity}/{project}/ops: ops stored as source files (`docs/api/trace.md#v2-objects`). */
export async function v2OpRoutes(app: FastifyInstance, options: { v2: V2ObjectResources }): Promise<void> {
  useLosslessJson(app);
  const { v2 } = options;
  const common = traceRoute("v2 ops");
  const view = (op: Awaited<ReturnType<V2ObjectResources["readOp"]>>) => ({ ...headerFields(op), code: op.code });

  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/ops", summary: "Create an op version", params: ProjectPath, body: OpCreateBody, response: CreatedRes, ...common }, async ({ params, body }, request) =>
    createdFields(await v2.createOp(pathProject(request, params), { name: body.name, sourceCode: body.source_code }, traceUserId(request))),
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/ops/:object_id/versions/:digest", summary: "Read an op version", params: VersionPath, response: OpRes, ...common }, async ({ params }, request) =>
    view(await v2.readOp(pathProject(request, params), params.object_id, params.digest)),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/ops", summary: "List the latest ops as JSON Lines", params: ProjectPath, query: ListQuery, stream: OpRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const ops = await v2.listOps(pathProject(request, params), pageOf(query));
      return sendJsonLines(request, reply, ops.map(view), stringifyJsonLossless);
    },
  );

  defineRoute(app, { method: "DELETE", url: "/v2/:entity/:project/ops/:object_id", summary: "Delete op versions", params: ObjectPath, query: DeleteQuery, response: DeleteRes, ...common }, async ({ params, query }, request) => ({
    num_deleted: await v2.delete(pathProject(request, params), params.object_id, digestsOf(query)),
  }));
}
