import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { V2ObjectResources } from "../../../trace/v2-resources.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { pathProject, traceUserId } from "../common/project.js";
import { createdFields, DeleteQuery, digestsOf, headerFields, ListQuery, ObjectPath, pageOf, ProjectPath, VersionPath } from "./common.js";
import { DeleteRes, ScorerCreateBody, ScorerCreateRes, ScorerRes } from "./protocol.js";

/** /v2/{entity}/{project}/scorers: a Scorer object with score and summarize ops (`docs/api/trace.md#v2-objects`). */
export async function v2ScorerRoutes(app: FastifyInstance, options: { v2: V2ObjectResources }): Promise<void> {
  useLosslessJson(app);
  const { v2 } = options;
  const common = traceRoute("v2 scorers");
  const view = (scorer: Awaited<ReturnType<V2ObjectResources["readScorer"]>>) => ({ ...headerFields(scorer), name: scorer.name, description: scorer.description, score_op: scorer.scoreOp });

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/scorers", summary: "Create a scorer version", params: ProjectPath, body: ScorerCreateBody, response: ScorerCreateRes, ...common },
    async ({ params, body }, request) => {
      const created = await v2.createScorer(pathProject(request, params), { name: body.name, description: body.description, opSourceCode: body.op_source_code }, traceUserId(request));
      return { ...createdFields(created), scorer: created.scorer };
    },
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/scorers/:object_id/versions/:digest", summary: "Read a scorer version", params: VersionPath, response: ScorerRes, ...common }, async ({ params }, request) =>
    view(await v2.readScorer(pathProject(request, params), params.object_id, params.digest)),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/scorers", summary: "List scorer versions as JSON Lines", params: ProjectPath, query: ListQuery, stream: ScorerRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const scorers = await v2.listScorers(pathProject(request, params), pageOf(query));
      return sendJsonLines(request, reply, scorers.map(view), stringifyJsonLossless);
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/scorers/:object_id", summary: "Delete scorer versions", params: ObjectPath, query: DeleteQuery, response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await v2.delete(pathProject(request, params), params.object_id, digestsOf(query)),
    }),
  );
}
