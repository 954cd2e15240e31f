import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { TraceServices } from "../../../trace/services.js";
import type { TableRowView, TableUpdate } from "../../../trace/tables.js";
import { defineRoute } from "../../routes.js";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { resolveProject } from "../common/project.js";
import {
  TableCreateFromDigestsReq,
  TableCreateFromDigestsRes,
  TableCreateReq,
  TableCreateRes,
  TableQueryReq,
  TableQueryRes,
  TableQueryStatsBatchReq,
  TableQueryStatsBatchRes,
  TableQueryStatsReq,
  TableQueryStatsRes,
  TableRowRes,
  type TableRowResponse,
  TableUpdateReq,
  TableUpdateRes,
} from "./protocol.js";

function rowSchemaOf(row: TableRowView): TableRowResponse {
  return { digest: row.digest, val: row.val, original_index: row.originalIndex };
}

/** Tables (`docs/api/trace.md#tables`): create, update, create from row digests, query (also streamed) and stats. */
export async function tableRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const { tables } = options.trace;
  const common = traceRoute("tables");

  defineRoute(app, { method: "POST", url: "/table/create", summary: "Create a table from rows", body: TableCreateReq, response: TableCreateRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.table.project_id);
    const created = await tables.create(projectId, body.table.rows, body.table.expected_digest);
    return { digest: created.digest, row_digests: created.rowDigests };
  });

  defineRoute(app, { method: "POST", url: "/table/update", summary: "Derive a table by appending, popping and inserting rows", body: TableUpdateReq, response: TableUpdateRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    const updated = await tables.update(projectId, body.base_digest, body.updates as TableUpdate[]);
    return { digest: updated.digest, updated_row_digests: updated.updatedRowDigests };
  });

  defineRoute(
    app,
    { method: "POST", url: "/table/create_from_digests", summary: "Create a table from stored row digests", body: TableCreateFromDigestsReq, response: TableCreateFromDigestsRes, ...common },
    async ({ body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      return tables.createFromDigests(projectId, body.row_digests, body.expected_digest);
    },
  );

  const queryInput = (body: z.output<typeof TableQueryReq>) => ({
    digest: body.digest,
    rowDigests: body.filter?.row_digests ?? undefined,
    sortBy: body.sort_by ?? undefined,
    limit: body.limit ?? undefined,
    offset: body.offset ?? undefined,
  });

  defineRoute(app, { method: "POST", url: "/table/query", summary: "Query the rows of a table", body: TableQueryReq, response: TableQueryRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    return { rows: (await tables.query(projectId, queryInput(body))).map(rowSchemaOf) };
  });

  defineRoute(
    app,
    { method: "POST", url: "/table/query_stream", summary: "Query the rows of a table as JSON Lines", body: TableQueryReq, stream: TableRowRes, streamFormat: "jsonl", ...common },
    async ({ body }, request, reply) => {
      const { projectId } = resolveProject(request, body.project_id);
      const stream = tables.queryStream(projectId, queryInput(body));
      // Read the first row before answering, so an error still gets the normal error response.
      const first = await stream.next();
      async function* rows() {
        if (first.done) return;
        yield rowSchemaOf(first.value);
        for await (const row of stream) yield rowSchemaOf(row);
      }
      return sendJsonLines(request, reply, rows(), stringifyJsonLossless);
    },
  );

  defineRoute(app, { method: "POST", url: "/table/query_stats", summary: "Row count of a table", body: TableQueryStatsReq, response: TableQueryStatsRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    return { count: await tables.count(projectId, body.digest) };
  });

  defineRoute(
    app,
    { method: "POST", url: "/table/query_stats_batch", summary: "Row counts (and sizes) of several tables", body: TableQueryStatsBatchReq, response: TableQueryStatsBatchRes, ...common },
    async ({ body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      const stats = await tables.stats(projectId, body.digests ?? [], body.include_storage_size ?? false);
      return { tables: stats.map((table) => ({ count: table.count, digest: table.digest, storage_size_bytes: table.storageSizeBytes ?? null })) };
    },
  );
}
