import { z } from "zod";
import { ProjectId } from "../common/schemas.js";

/** Service routes under the trace base path (`docs/api/trace.md#service`): requests and answers. */

export const HealthRes = z.object({ status: z.literal("ok") });
export const ServerInfoRes = z.object({ min_required_weave_python_version: z.string(), trace_server_version: z.string() });
export const VersionRes = z.string().describe("The server's version, as a JSON string");
export const GeolocateQuery = z.object({ ip: z.string().nullish() });
export const GeolocateRes = z.object({ ip: z.string(), location: z.null().describe("No geo-IP database here"), allowed: z.boolean() });

export const ProjectsInfoReq = z.object({ project_ids: z.array(ProjectId) });
export const ProjectsInfoRes = z.array(z.object({ external_project_id: z.string(), internal_project_id: z.string() }));
export type ProjectsInfoResponse = z.output<typeof ProjectsInfoRes>;
