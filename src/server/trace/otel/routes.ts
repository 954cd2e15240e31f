import type { Readable } from "node:stream";
import zlib from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CallWrite } from "../../../store/trace/calls/types.js";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import type { TraceServices } from "../../../trace/services.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { traceRoute } from "../common/scope.js";
import { AttributePathConflictError } from "./attributes.js";
import { spanToCall } from "./span-to-call.js";
import { decodeExportTraceJson } from "./otlp-json.js";
import { decodeExportTraceRequest, encodeExportTraceResponse } from "./protobuf.js";
import { OtlpFormatError, type OtlpResourceSpans } from "./types.js";
import { OTEL_PROTOBUF_RESPONSE, OtelExportRes, type OtelExportResponse } from "./protocol.js";

const PROTOBUF_TYPES = ["application/x-protobuf", "application/protobuf"];
const MAX_REPORTED_ERRORS = 20;

/** The project of one resource: `wandb.entity` + `wandb.project` attributes, else the `project_id` header. */
function projectOf(request: FastifyRequest, resource: OtlpResourceSpans["resource"]): string {
  const attribute = (key: string) => resource.attributes.find(([name]) => name === key)?.[1];
  const project = attribute("wandb.project");
  if (typeof project === "string" && project) {
    // A project without an entity belongs to the caller's entity.
    if (project.includes("/")) return project;
    const entity = attribute("wandb.entity");
    return `${typeof entity === "string" && entity ? entity : principalOf(request).entity}/${project}`;
  }
  const header = request.headers.project_id;
  if (typeof header === "string" && header) return header;
  throw new ApiError(400, "No project given: set the resource attributes wandb.entity and wandb.project, or the project_id header");
}

/**
 * OpenTelemetry trace ingest (`docs/api/trace.md#otel`): OTLP protobuf or JSON, optionally gzip or
 * deflate encoded. Each span becomes one complete call; spans whose attributes cannot be nested are
 * rejected and reported in `partial_success`, the others are stored.
 */
export async function otelRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  const store = options.trace.calls;
  app.addContentTypeParser(PROTOBUF_TYPES, { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  app.addHook("preParsing", async (request, _reply, payload) => {
    const encoding = request.headers["content-encoding"];
    if (!encoding || encoding === "identity") return payload;
    if (encoding !== "gzip" && encoding !== "deflate") throw new ApiError(415, `Unsupported Content-Encoding '${encoding}': use gzip, deflate or none`);
    // The body limit then applies to the decompressed size; the content length to the encoded one.
    const decoded = payload.pipe(encoding === "gzip" ? zlib.createGunzip() : zlib.createInflate()) as unknown as Readable & { receivedEncodedLength: number };
    decoded.receivedEncodedLength = 0;
    payload.on("data", (chunk: Buffer) => (decoded.receivedEncodedLength += chunk.length));
    payload.on("error", (error) => decoded.destroy(error));
    return decoded;
  });

  const ingest = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | OtelExportResponse> => {
    const protobuf = Buffer.isBuffer(request.body);
    let resources: OtlpResourceSpans[];
    try {
      resources = protobuf ? decodeExportTraceRequest(request.body as Buffer) : decodeExportTraceJson(request.body);
    } catch (error) {
      if (error instanceof OtlpFormatError) throw new ApiError(400, `Invalid OTLP ${protobuf ? "protobuf" : "JSON"} body: ${error.message}`);
      throw error;
    }
    const wbUserId = traceUserId(request);
    const writes: CallWrite[] = [];
    const errors: string[] = [];
    let rejected = 0;
    for (const resource of resources) {
      const projectId = resolveProject(request, projectOf(request, resource.resource)).projectId;
      for (const span of resource.spans) {
        const ident = `name='${span.name}' trace_id='${span.traceId}' span_id='${span.spanId}'`;
        if (!span.traceId || !span.spanId) {
          rejected += 1;
          errors.push(`Rejected span (${ident}): trace_id and span_id are required`);
          continue;
        }
        try {
          writes.push(spanToCall(span, resource.resource, projectId, wbUserId));
        } catch (error) {
          if (!(error instanceof AttributePathConflictError)) throw error;
          rejected += 1;
          errors.push(`Rejected span (${ident}): ${error.message}`);
        }
      }
    }
    await store.writeCalls(writes);
    const message = errors.slice(0, MAX_REPORTED_ERRORS).join("; ") + (errors.length > MAX_REPORTED_ERRORS ? "; ..." : "");
    if (protobuf) return reply.type("application/x-protobuf").send(encodeExportTraceResponse(rejected, message));
    return rejected > 0 ? { partial_success: { rejected_spans: rejected, error_message: message } } : {};
  };
  defineRoute(app, { method: "POST", url: "/otel/v1/traces", summary: "OTLP trace export (protobuf or JSON)", response: OtelExportRes, rawResponse: OTEL_PROTOBUF_RESPONSE, ...traceRoute("otel") }, (_input, request, reply) =>
    ingest(request, reply),
  );
  // Weave's agent integrations (its Node SDK, Python sessions) export here by default.
  defineRoute(
    app,
    { method: "POST", url: "/agents/otel/v1/traces", summary: "OTLP trace export from agent integrations (same as /otel/v1/traces)", response: OtelExportRes, rawResponse: OTEL_PROTOBUF_RESPONSE, ...traceRoute("otel") },
    (_input, request, reply) => ingest(request, reply),
  );
}
