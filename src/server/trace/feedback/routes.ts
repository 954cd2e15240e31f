import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Feedback } from "../../../store/trace/feedback.js";
import { defaultAggregations, feedbackStats, payloadSchema } from "../../../store/trace/feedback-stats.js";
import { nowTimestamp } from "../../../store/trace/timestamps.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { type FeedbackDeps, prepareFeedback } from "./feedback-rules.js";
import {
  type FeedbackCreateBody,
  FeedbackBatchCreateReq,
  FeedbackBatchCreateRes,
  FeedbackCreateReq,
  FeedbackCreateRes,
  type FeedbackCreateResponse,
  FeedbackPayloadSchemaReq,
  FeedbackPayloadSchemaRes,
  FeedbackPurgeReq,
  FeedbackQueryReq,
  FeedbackQueryRes,
  FeedbackReplaceReq,
  FeedbackStatsReq,
  FeedbackStatsRes,
} from "./protocol.js";
import { EmptyRes } from "../common/schemas.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { traceRoute } from "../common/scope.js";
import { purgeIds } from "../common/purge-query.js";

const createRes = (row: Feedback): FeedbackCreateResponse => ({ id: row.id, created_at: row.created_at, wb_user_id: row.wb_user_id, payload: row.payload });

/** Feedback on calls and objects (`docs/api/trace.md#feedback`). */
export async function feedbackRoutes(app: FastifyInstance, deps: FeedbackDeps): Promise<void> {
  const store = deps.calls;
  const common = traceRoute("feedback");
  const prepare = (request: FastifyRequest, body: FeedbackCreateBody) => {
    resolveProject(request, body.project_id);
    return prepareFeedback(body, traceUserId(request), deps);
  };

  defineRoute(app, { method: "POST", url: "/feedback/create", summary: "Add feedback", body: FeedbackCreateReq, response: FeedbackCreateRes, ...common }, async ({ body }, request) => {
    const [stored] = await store.insertFeedback([await prepare(request, body)]);
    return createRes(stored!);
  });

  defineRoute(app, { method: "POST", url: "/feedback/batch/create", summary: "Add several feedback items", body: FeedbackBatchCreateReq, response: FeedbackBatchCreateRes, ...common }, async ({ body }, request) => {
    // Every item is checked before any is stored.
    const rows: Feedback[] = [];
    for (const item of body.batch) rows.push(await prepare(request, item));
    return { res: (await store.insertFeedback(rows)).map(createRes) };
  });

  defineRoute(app, { method: "POST", url: "/feedback/replace", summary: "Replace feedback", body: FeedbackReplaceReq, response: FeedbackCreateRes, ...common }, async ({ body }, request) => {
    // The replacement is validated first, so a rejected request keeps the old feedback.
    const row = await prepare(request, body);
    return createRes(await store.replaceFeedback(body.project_id, body.feedback_id, row));
  });

  defineRoute(app, { method: "POST", url: "/feedback/query", summary: "Query feedback", body: FeedbackQueryReq, response: FeedbackQueryRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    return store.queryFeedback({ projectId: body.project_id, fields: body.fields, query: body.query?.$expr, sortBy: body.sort_by, limit: body.limit, offset: body.offset });
  });

  defineRoute(app, { method: "POST", url: "/feedback/purge", summary: "Delete feedback by id", body: FeedbackPurgeReq, response: EmptyRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    await store.purgeFeedback(body.project_id, purgeIds(body.query.$expr, "Can only purge feedback by specifying one or more feedback ids", false));
    return {};
  });

  defineRoute(app, { method: "POST", url: "/feedback/stats", summary: "Feedback payload metrics over time", body: FeedbackStatsReq, response: FeedbackStatsRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    const end = body.end ?? nowTimestamp();
    const rows = await store.feedbackInRange({ projectId: body.project_id, start: body.start, end, feedbackType: body.feedback_type, triggerRef: body.trigger_ref });
    return feedbackStats(rows, {
      start: body.start,
      end,
      granularity: body.granularity,
      timezone: body.timezone ?? "UTC",
      metrics: body.metrics.map((metric) => {
        const valueType = metric.value_type ?? "numeric";
        const aggregations = metric.aggregations ?? [];
        const percentiles = metric.percentiles ?? [];
        return { json_path: metric.json_path, value_type: valueType, aggregations: aggregations.length === 0 && percentiles.length === 0 ? defaultAggregations(valueType) : aggregations, percentiles };
      }),
    });
  });

  // Agent-monitor score aggregation (used by the Python client; docs/api/trace.md#extra-routes allows 501).
  defineRoute(app, { method: "POST", url: "/feedback/aggregate", summary: "Not implemented", rawResponse: { mediaType: null, description: "Never succeeds: always 501" }, ...common }, async () => {
    throw new ApiError(501, "/feedback/aggregate (agent monitor score aggregation) is not implemented by this server");
  });

  defineRoute(
    app,
    { method: "POST", url: "/feedback/payload_schema", summary: "Payload paths found in recent feedback", body: FeedbackPayloadSchemaReq, response: FeedbackPayloadSchemaRes, ...common },
    async ({ body }, request) => {
      resolveProject(request, body.project_id);
      const rows = await store.feedbackInRange({
        projectId: body.project_id,
        start: body.start,
        end: body.end ?? nowTimestamp(),
        feedbackType: body.feedback_type,
        triggerRef: body.trigger_ref,
        limit: body.sample_limit ?? 2000,
      });
      return { paths: payloadSchema(rows.map((row) => row.payload)) };
    },
  );
}
