import type { FastifyInstance, FastifyRequest } from "fastify";
import type { MetricSpec } from "../../../store/trace/buckets.js";
import type { CallSchema, CallsQuery, SendableCall } from "../../../store/trace/calls/types.js";
import { stringifyWithJsonText } from "../../../store/trace/json-text.js";
import { ApiError } from "../../errors.js";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import { defineRoute } from "../../routes.js";
import {
  CallReadReq,
  CallReadRes,
  CallSchemaRes,
  type CallsQueryBody,
  CallsQueryReq,
  CallsQueryRes,
  CallsQueryStatsReq,
  CallsQueryStatsRes,
  type CallsQueryStatsResponse,
  CallStatsReq,
  CallStatsRes,
  CallsUsageReq,
  CallsUsageRes,
  ThreadRes,
  ThreadsQueryReq,
  TraceUsageReq,
} from "./protocol.js";
import { sendJsonArrayObject } from "../common/json-array.js";
import { sendJsonLines } from "../common/json-lines.js";
import { resolveProject } from "../common/project.js";
import { traceRoute } from "../common/scope.js";
import type { TraceServices } from "../../../trace/services.js";
import { expandColumns } from "./ref-expansion.js";
import { attachUsernames } from "./usernames.js";

const DEFAULT_USAGE_LIMIT = 10_000;

function toCallsQuery(body: CallsQueryBody): CallsQuery {
  return {
    projectId: body.project_id,
    filter: body.filter,
    query: body.query?.$expr,
    sortBy: body.sort_by,
    limit: body.limit,
    offset: body.offset,
    // Usernames are resolved from wb_user_id, so a narrowed column list still reads it.
    columns: body.include_usernames && body.columns && body.columns.length > 0 ? [...body.columns, "wb_user_id"] : body.columns,
    includeStorageSize: body.include_storage_size === true,
    includeTotalStorageSize: body.include_total_storage_size === true,
  };
}

function expandsRefs(body: CallsQueryBody): boolean {
  return (body.expand_columns?.length ?? 0) > 0 && body.return_expanded_column_values !== false;
}

function metricSpecs(metrics: { metric: string; aggregations?: MetricSpec["aggregations"] | null; percentiles?: number[] | null }[] | null | undefined): MetricSpec[] {
  return (metrics ?? []).map((spec) => {
    const aggregations = spec.aggregations ?? [];
    const percentiles = spec.percentiles ?? [];
    return { metric: spec.metric, aggregations: aggregations.length === 0 && percentiles.length === 0 ? ["sum"] : aggregations, percentiles };
  });
}

/** Reading calls: stream and batch queries, counts, usage roll-ups, time-bucketed stats, threads. */
export async function callQueryRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  const { calls, refs } = options.trace;
  const common = traceRoute("calls");

  /**
   * Pages of matching calls with costs, feedback and expanded refs as the request asks. Unless refs
   * are expanded (which walks the values), the stored JSON goes out as its text, never parsed.
   */
  async function* callPages(body: CallsQueryBody): AsyncGenerator<SendableCall[]> {
    const query = toCallsQuery(body);
    const options = { includeCosts: body.include_costs === true, includeFeedback: body.include_feedback === true };
    const pages = expandsRefs(body) ? withExpandedRefs(body, calls.queryCalls(query, options)) : calls.queryCallsToSend(query, options);
    for await (const page of pages) {
      if (body.include_usernames) await attachUsernames(app.services.store.db, page);
      yield page;
    }
  }

  async function* withExpandedRefs(body: CallsQueryBody, pages: AsyncGenerator<CallSchema[]>): AsyncGenerator<CallSchema[]> {
    for await (const page of pages) {
      await expandColumns(body.project_id, page, body.expand_columns!, refs);
      yield page;
    }
  }

  /** Expanded values come from stored objects, whose floats keep their Python spelling (1.0). */
  const serializer = (body: CallsQueryBody) => (expandsRefs(body) ? stringifyJsonLossless : stringifyWithJsonText);

  defineRoute(app, { method: "POST", url: "/calls/stream_query", summary: "Query calls (JSON Lines)", body: CallsQueryReq, stream: CallSchemaRes, streamFormat: "jsonl", ...common }, async ({ body }, request, reply) => {
    resolveProject(request, body.project_id);
    const pages = callPages(body);
    // The first page is read before any byte is sent, so a bad query still gets a normal error.
    const first = await pages.next();
    async function* rows() {
      if (first.done) return;
      yield* first.value;
      for await (const page of pages) yield* page;
    }
    return sendJsonLines(request, reply, rows(), serializer(body));
  });

  // The same rows as one JSON object, written page by page rather than built whole in memory.
  defineRoute(app, { method: "POST", url: "/calls/query", summary: "Query calls", body: CallsQueryReq, response: CallsQueryRes, ...common }, async ({ body }, request, reply) => {
    resolveProject(request, body.project_id);
    const pages = callPages(body);
    const first = await pages.next();
    async function* all() {
      if (first.done) return;
      yield first.value;
      yield* pages;
    }
    return sendJsonArrayObject(request, reply, "calls", all(), serializer(body));
  });

  defineRoute(app, { method: "POST", url: "/call/read", summary: "Read one call", body: CallReadReq, response: CallReadRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    const query: CallsQuery = {
      projectId: body.project_id,
      filter: { call_ids: [body.id] },
      limit: 1,
      sortBy: [],
      includeStorageSize: body.include_storage_size === true,
      includeTotalStorageSize: body.include_total_storage_size === true,
    };
    for await (const page of calls.queryCalls(query, { includeCosts: body.include_costs === true })) return { call: page[0] ?? null };
    return { call: null };
  });

  defineRoute(app, { method: "POST", url: "/calls/query_stats", summary: "Count calls", body: CallsQueryStatsReq, response: CallsQueryStatsRes, ...common }, async ({ body }, request): Promise<CallsQueryStatsResponse> => {
    resolveProject(request, body.project_id);
    if (body.limit !== null && body.limit !== undefined && body.limit < 1) throw new ApiError(400, "Limit must be a positive integer");
    const query: CallsQuery = { projectId: body.project_id, filter: body.filter, query: body.query?.$expr };
    const { count, hasMore } = await calls.countCalls(query, body.limit ?? undefined);
    const res: CallsQueryStatsResponse = { count, has_more: hasMore };
    if (body.include_total_storage_size) res.total_storage_size_bytes = await calls.totalStorageSize(query);
    return res;
  });

  defineRoute(app, { method: "POST", url: "/calls/usage", summary: "Token usage of calls with their descendants", body: CallsUsageReq, response: CallsUsageRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    return calls.callsUsage({ projectId: body.project_id, callIds: body.call_ids, includeCosts: body.include_costs === true, limit: body.limit ?? DEFAULT_USAGE_LIMIT });
  });

  defineRoute(app, { method: "POST", url: "/trace/usage", summary: "Token usage of every matching call", body: TraceUsageReq, response: CallsUsageRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    return calls.traceUsage({ projectId: body.project_id, filter: body.filter, query: body.query?.$expr, includeCosts: body.include_costs === true, limit: body.limit ?? DEFAULT_USAGE_LIMIT });
  });

  defineRoute(app, { method: "POST", url: "/calls/stats", summary: "Time-bucketed call metrics", body: CallStatsReq, response: CallStatsRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    return calls.callStats({
      projectId: body.project_id,
      start: body.start,
      end: body.end,
      granularity: body.granularity,
      timezone: body.timezone ?? "UTC",
      usageMetrics: metricSpecs(body.usage_metrics),
      callMetrics: metricSpecs(body.call_metrics),
      filter: body.filter,
    });
  });

  defineRoute(
    app,
    { method: "POST", url: "/threads/stream_query", summary: "Query threads (JSON Lines)", body: ThreadsQueryReq, stream: ThreadRes, streamFormat: "jsonl", ...common },
    async ({ body }, request: FastifyRequest, reply) => {
      resolveProject(request, body.project_id);
      const threads = await calls.queryThreads({
        projectId: body.project_id,
        afterDatetime: body.filter?.after_datetime,
        beforeDatetime: body.filter?.before_datetime,
        threadIds: body.filter?.thread_ids,
        sortBy: body.sort_by,
        limit: body.limit,
        offset: body.offset,
      });
      return sendJsonLines(request, reply, threads);
    },
  );
}
