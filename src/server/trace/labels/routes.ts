import type { FastifyInstance } from "fastify";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { EmptyRes } from "../common/schemas.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { resolveProject } from "../common/project.js";

import { AliasesRes, ObjectPath, ProjectQuery, RemoveAliasesBody, SetAliasesBody, TagsBody, TagsRes, VersionPath } from "./protocol.js";

/** Tags on object versions and aliases of objects (`docs/api/trace.md#objects`); they never change digests. */
export async function labelRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const { objects } = options.trace;
  const common = traceRoute("objects");

  defineRoute(
    app,
    { method: "PUT", url: "/objs/:object_id/versions/:digest/tags", summary: "Add tags to an object version", params: VersionPath, body: TagsBody, response: EmptyRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      await objects.addTags(projectId, params.object_id, params.digest, body.tags);
      return {};
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/objs/:object_id/versions/:digest/tags/remove", summary: "Remove tags from an object version", params: VersionPath, body: TagsBody, response: EmptyRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      await objects.removeTags(projectId, params.object_id, params.digest, body.tags);
      return {};
    },
  );

  defineRoute(app, { method: "PUT", url: "/objs/:object_id/aliases", summary: "Point aliases at an object version", params: ObjectPath, body: SetAliasesBody, response: EmptyRes, ...common }, async ({ params, body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    await objects.setAliases(projectId, params.object_id, body.digest, body.aliases);
    return {};
  });

  defineRoute(
    app,
    { method: "POST", url: "/objs/:object_id/aliases/remove", summary: "Remove aliases of an object", params: ObjectPath, body: RemoveAliasesBody, response: EmptyRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      await objects.removeAliases(projectId, params.object_id, body.aliases);
      return {};
    },
  );

  defineRoute(app, { method: "GET", url: "/tags", summary: "Distinct tags of a project", query: ProjectQuery, response: TagsRes, ...common }, async ({ query }, request) => {
    const { projectId } = resolveProject(request, query.project_id);
    return { tags: await objects.listTags(projectId) };
  });

  defineRoute(app, { method: "GET", url: "/aliases", summary: "Distinct aliases of a project", query: ProjectQuery, response: AliasesRes, ...common }, async ({ query }, request) => {
    const { projectId } = resolveProject(request, query.project_id);
    return { aliases: await objects.listAliases(projectId) };
  });
}
