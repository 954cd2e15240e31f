import type { FastifyInstance } from "fastify";
import type { TraceServices } from "../../../trace/services.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { type FormPart, parseMultipart, requiredField } from "./multipart.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { resolveProject } from "../common/project.js";

import { FILE_CONTENT, FileContentReq, FileCreateRes, FilesStatsReq, FilesStatsRes } from "./protocol.js";

/**
 * Files (`docs/api/trace.md#files`): multipart upload, raw download, project size. The Python client's
 * plural paths (`/files/...`) are served too.
 */
export async function fileRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer" }, (request, body, done) => {
    try {
      done(null, parseMultipart(body as Buffer, request.headers["content-type"]));
    } catch (error) {
      done(error as Error);
    }
  });
  const { files } = options.trace;
  const common = traceRoute("files");

  for (const url of ["/file/create", "/files/create"]) {
    defineRoute(app, { method: "POST", url, summary: "Upload a file (multipart/form-data: project_id, file, expected_digest?)", response: FileCreateRes, ...common }, async (_input, request) => {
      // The content type, not the body's shape: a JSON array parses to an array too.
      if (!/^multipart\/form-data\b/i.test(request.headers["content-type"] ?? "") || !Array.isArray(request.body)) {
        throw new ApiError(415, "Unsupported Media Type: send multipart/form-data with the fields project_id and file");
      }
      const parts = request.body as FormPart[];
      const { projectId } = resolveProject(request, requiredField(parts, "project_id").data.toString("utf8"));
      const content = requiredField(parts, "file").data;
      const expected = parts.find((part) => part.name === "expected_digest")?.data.toString("utf8");
      return files.create(projectId, content, expected || undefined);
    });
  }

  for (const url of ["/file/content", "/files/content"]) {
    defineRoute(app, { method: "POST", url, summary: "Download a file's bytes", body: FileContentReq, rawResponse: FILE_CONTENT, ...common }, async ({ body }, request, reply) => {
      const { projectId } = resolveProject(request, body.project_id);
      const content = await files.read(projectId, body.digest);
      return reply.type("application/octet-stream").send(content);
    });
  }

  for (const url of ["/files/query_stats", "/files/stats"]) {
    defineRoute(app, { method: "POST", url, summary: "Total size of a project's files", body: FilesStatsReq, response: FilesStatsRes, ...common }, async ({ body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      return { total_size_bytes: await files.totalSizeBytes(projectId) };
    });
  }
}
