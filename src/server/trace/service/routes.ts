import type { FastifyInstance } from "fastify";
import { flywheelVersion } from "../../../version.js";
import { defineRoute } from "../../routes.js";
import { GeolocateQuery, GeolocateRes, HealthRes, ProjectsInfoReq, ProjectsInfoRes, type ProjectsInfoResponse, ServerInfoRes, VersionRes } from "./protocol.js";
import { resolveProject } from "../common/project.js";

/**
 * The Python client refuses to trace when the server reports a version below its own minimum
 * (`docs/api/trace.md#service`). Flywheel implements the current trace API, so it reports a version above
 * any such minimum rather than its package version, which has no relation to Weave's numbering.
 */
export const WEAVE_COMPATIBLE_SERVER_VERSION = "99.0.0";
const MIN_REQUIRED_WEAVE_PYTHON_VERSION = "0.0.1";

/** Health, version, server info and geolocation under the trace base path; they need no key. */
export async function tracePublicServiceRoutes(app: FastifyInstance): Promise<void> {
  const common = { tags: ["trace: service"], errorStyle: "trace" as const };

  defineRoute(app, { method: "GET", url: "/health", summary: "Liveness check", response: HealthRes, ...common }, async () => ({ status: "ok" }));

  defineRoute(app, { method: "GET", url: "/server_info", summary: "Versions the clients check", response: ServerInfoRes, ...common }, async () => ({
    min_required_weave_python_version: MIN_REQUIRED_WEAVE_PYTHON_VERSION,
    trace_server_version: WEAVE_COMPATIBLE_SERVER_VERSION,
  }));

  defineRoute(app, { method: "GET", url: "/version", summary: "The server's version, as a JSON string", response: VersionRes, ...common }, async (_input, _request, reply) =>
    reply.type("application/json; charset=utf-8").send(JSON.stringify(flywheelVersion)),
  );

  // A self-hosted server has no geo-IP database and no regional restrictions.
  defineRoute(app, { method: "GET", url: "/geolocate", summary: "Location of an IP address (none known here)", query: GeolocateQuery, response: GeolocateRes, ...common }, async ({ query }, request) => ({
    ip: query.ip ?? request.ip,
    location: null,
    allowed: true,
  }));
}

/** POST /service/projects_info: Flywheel keeps external project ids end to end, so both ids are the same. */
export async function traceServiceRoutes(app: FastifyInstance): Promise<void> {
  defineRoute(
    app,
    { method: "POST", url: "/service/projects_info", summary: "Internal ids of projects", tags: ["trace: service"], body: ProjectsInfoReq, response: ProjectsInfoRes, errorStyle: "trace", security: "basic" },
    async ({ body }, request): Promise<ProjectsInfoResponse> =>
      body.project_ids.map((id) => {
        const { projectId } = resolveProject(request, id);
        return { external_project_id: projectId, internal_project_id: projectId };
      }),
  );
}
