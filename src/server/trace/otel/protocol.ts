import { z } from "zod";

/** POST /otel/v1/traces (`docs/api/trace.md#opentelemetry`): the answer. The request is OTLP's `ExportTraceServiceRequest`, protobuf or JSON. */

/** OTLP's `ExportTraceServiceResponse` in JSON (to a JSON request): `{}` when every span was stored. */
export const OtelExportRes = z.union([z.object({}).strict(), z.object({ partial_success: z.object({ rejected_spans: z.int().min(1), error_message: z.string() }) })]);
export type OtelExportResponse = z.output<typeof OtelExportRes>;

/** To a protobuf request the same answer is protobuf (an empty message when every span was stored). */
export const OTEL_PROTOBUF_RESPONSE = { mediaType: "application/x-protobuf", description: "ExportTraceServiceResponse (to a protobuf request)" };
