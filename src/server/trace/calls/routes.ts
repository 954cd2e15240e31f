import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { CallEnd, CallStart, CallWrite } from "../../../store/trace/calls/types.js";
import { uuidv7 } from "../../../store/trace/ids.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import {
  CallCreateBatchReq,
  CallEndReq,
  CallStartReq,
  CallStartRes,
  type CallStartResponse,
  CallsCompleteReq,
  CallsDeleteReq,
  CallsDeleteRes,
  CallUpdateReq,
  CallUpsertBatchRes,
  type CallUpsertBatchResponse,
  type EndedCall,
  type StartedCall,
} from "./protocol.js";
import { quickCallEnd, quickCallStart } from "./call-parts.js";
import { pathProject, resolveProject, traceUserId } from "../common/project.js";
import { EmptyRes, parseBodyPart } from "../common/schemas.js";
import { traceRoute } from "../common/scope.js";
import type { TraceServices } from "../../../trace/services.js";

const MAX_DELETE_CALLS = 1000;

export function toCallStart(start: StartedCall, wbUserId: string): CallStart {
  return {
    projectId: start.project_id,
    id: start.id ?? uuidv7(),
    traceId: start.trace_id ?? uuidv7(),
    opName: start.op_name,
    displayName: start.display_name ?? null,
    parentId: start.parent_id ?? null,
    threadId: start.thread_id ?? null,
    turnId: start.turn_id ?? null,
    startedAt: start.started_at,
    attributes: start.attributes,
    inputs: start.inputs,
    otelDump: start.otel_dump ?? null,
    wbUserId,
    wbRunId: start.wb_run_id ?? null,
    wbRunStep: start.wb_run_step ?? null,
  };
}

export function toCallEnd(end: EndedCall): CallEnd {
  return {
    projectId: end.project_id,
    id: end.id,
    traceId: end.trace_id ?? null,
    endedAt: end.ended_at,
    exception: end.exception ?? null,
    output: end.output ?? null,
    summary: end.summary,
    wbRunStepEnd: end.wb_run_step_end ?? null,
  };
}

/** Every project a batch names must be the caller's (another entity's is a 404). */
function checkProjects(request: FastifyRequest, projectIds: Iterable<string>): void {
  for (const projectId of new Set(projectIds)) resolveProject(request, projectId);
}

/** The v2 routes carry the project in the path; bodies must name the same one. */
function checkPathProject(request: FastifyRequest, params: { entity: string; project: string }, bodyProjects: string[]): void {
  const projectId = pathProject(request, params);
  if (bodyProjects.some((id) => id !== projectId)) throw new ApiError(400, `project_id must be '${projectId}', the project of the path`);
}

const V2Params = z.object({ entity: z.string(), project: z.string() });

/** Call writes and single-call reads (`docs/api/trace.md#calls`, `docs/api/trace.md#extra-routes`). */
export async function callRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  const { calls } = options.trace;
  const common = traceRoute("calls");

  const start = async (request: FastifyRequest, body: z.output<typeof CallStartReq>): Promise<CallStartResponse> => {
    checkProjects(request, [body.start.project_id]);
    const call = toCallStart(body.start, traceUserId(request));
    await calls.writeCalls([{ start: call }]);
    return { id: call.id, trace_id: call.traceId };
  };
  const end = async (request: FastifyRequest, body: z.output<typeof CallEndReq>) => {
    checkProjects(request, [body.end.project_id]);
    await calls.writeCalls([{ end: toCallEnd(body.end) }]);
    return {};
  };

  defineRoute(app, { method: "POST", url: "/call/start", summary: "Start a call", body: CallStartReq, response: CallStartRes, ...common }, async ({ body }, request) => start(request, body));
  defineRoute(app, { method: "POST", url: "/call/end", summary: "End a call", body: CallEndReq, response: EmptyRes, ...common }, async ({ body }, request) => end(request, body));

  defineRoute(
    app,
    { method: "POST", url: "/call/upsert_batch", summary: "Start and end calls in one request", body: CallCreateBatchReq, response: CallUpsertBatchRes, ...common },
    async ({ body }, request): Promise<CallUpsertBatchResponse> => {
      const writes: CallWrite[] = [];
      const results: CallUpsertBatchResponse["res"] = [];
      const wbUserId = traceUserId(request);
      body.batch.forEach((item, index) => {
        if (item.mode === "start") {
          const call = quickCallStart(item.req, wbUserId) ?? toCallStart(parseBodyPart(CallStartReq, item.req, ["batch", index, "req"]).start, wbUserId);
          writes.push({ start: call });
          results.push({ id: call.id, trace_id: call.traceId });
        } else if (item.mode === "end") {
          writes.push({ end: quickCallEnd(item.req) ?? toCallEnd(parseBodyPart(CallEndReq, item.req, ["batch", index, "req"]).end) });
          results.push({});
        } else {
          throw new ApiError(400, `Invalid mode '${item.mode}' in batch item ${index}: expected 'start' or 'end'`);
        }
      });
      checkProjects(
        request,
        writes.map((write) => (write.start ?? write.end)!.projectId),
      );
      await calls.writeCalls(writes);
      return { res: results };
    },
  );

  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/calls/complete", summary: "Store complete calls", params: V2Params, body: CallsCompleteReq, response: EmptyRes, ...common }, async ({ params, body }, request) => {
    checkPathProject(
      request,
      params,
      body.batch.map((call) => call.project_id),
    );
    const wbUserId = traceUserId(request);
    await calls.writeCalls(body.batch.map((call) => ({ start: toCallStart(call, wbUserId), end: toCallEnd(call) })));
    return {};
  });
  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/call/start", summary: "Start a call", params: V2Params, body: CallStartReq, response: CallStartRes, ...common }, async ({ params, body }, request) => {
    checkPathProject(request, params, [body.start.project_id]);
    return start(request, body);
  });
  defineRoute(app, { method: "POST", url: "/v2/:entity/:project/call/end", summary: "End a call", params: V2Params, body: CallEndReq, response: EmptyRes, ...common }, async ({ params, body }, request) => {
    checkPathProject(request, params, [body.end.project_id]);
    return end(request, body);
  });

  defineRoute(app, { method: "POST", url: "/call/update", summary: "Rename a call", body: CallUpdateReq, response: EmptyRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    if (body.display_name === null || body.display_name === undefined) throw new ApiError(400, "One of [display_name] is required for call update");
    await calls.updateDisplayName(body.project_id, body.call_id, body.display_name);
    return {};
  });

  defineRoute(app, { method: "POST", url: "/calls/delete", summary: "Delete calls and their descendants", body: CallsDeleteReq, response: CallsDeleteRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    if (body.call_ids.length > MAX_DELETE_CALLS) {
      throw new ApiError(400, `Cannot delete more than ${MAX_DELETE_CALLS} calls at once (got ${body.call_ids.length})`);
    }
    return { num_deleted: await calls.deleteCalls(body.project_id, body.call_ids) };
  });
}
