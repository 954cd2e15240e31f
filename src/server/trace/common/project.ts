import type { FastifyRequest } from "fastify";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";

export interface ProjectRef {
  entity: string;
  project: string;
  /** The external id `entity/project`, as stored. */
  projectId: string;
}

/**
 * Parses a Weave `project_id` ("entity/project") and checks that the caller's key belongs to that
 * entity. Another entity's project answers exactly like a project that does not exist (404), so ids
 * never leak across tenants.
 */
export function resolveProject(request: FastifyRequest, projectId: string): ProjectRef {
  const parts = projectId.split("/");
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new ApiError(400, `Invalid project_id '${projectId}': expected 'entity/project'`);
  }
  const [entity, project] = parts as [string, string];
  if (entity !== principalOf(request).entity) throw new ApiError(404, `Project ${projectId} not found`);
  return { entity, project, projectId };
}

/** The project of a `/v2/{entity}/{project}/...` path, checked like `resolveProject`. */
export function pathProject(request: FastifyRequest, params: { entity: string; project: string }): string {
  return resolveProject(request, `${params.entity}/${params.project}`).projectId;
}

/**
 * The `wb_user_id` Weave records for writes (`docs/api/trace.md#project-and-identity`): Flywheel's only principals are
 * API keys, so the caller's key id stands for the user; request bodies never set it.
 */
export function traceUserId(request: FastifyRequest): string {
  return principalOf(request).keyId;
}
