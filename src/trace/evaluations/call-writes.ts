import type { CallEnd, CallSchema, CallStart } from "../../store/trace/calls/types.js";
import { uuidv7 } from "../../store/trace/ids.js";
import { objectRefUri } from "../../store/trace/refs.js";
import { nowTimestamp } from "../../store/trace/timestamps.js";
import type { TraceCallStore } from "../../store/trace/trace-store.js";
import type { V2ObjectResources } from "../v2-resources.js";

/** A call the server records itself (evaluation runs, predictions, scores, server-side evaluations). */
export interface NewCall {
  projectId: string;
  id?: string;
  /** Defaults to the call's own id: a new trace. */
  traceId?: string;
  parentId?: string | null;
  opName: string;
  displayName?: string | null;
  inputs: Record<string, unknown>;
  attributes?: Record<string, unknown>;
  wbUserId: string;
  startedAt?: string;
}

export function callStart(call: NewCall): CallStart {
  const id = call.id ?? uuidv7();
  return {
    projectId: call.projectId,
    id,
    traceId: call.traceId ?? id,
    opName: call.opName,
    displayName: call.displayName ?? null,
    parentId: call.parentId ?? null,
    threadId: null,
    turnId: null,
    startedAt: call.startedAt ?? nowTimestamp(),
    attributes: call.attributes ?? {},
    inputs: call.inputs,
    otelDump: null,
    wbUserId: call.wbUserId,
    wbRunId: null,
    wbRunStep: null,
  };
}

export function callEnd(projectId: string, id: string, result: { output?: unknown; summary?: Record<string, unknown>; exception?: string | null; endedAt?: string }): CallEnd {
  return {
    projectId,
    id,
    traceId: null,
    endedAt: result.endedAt ?? nowTimestamp(),
    exception: result.exception ?? null,
    output: result.output ?? null,
    summary: result.summary ?? {},
    wbRunStepEnd: null,
  };
}

/** One live call by id, or undefined. */
export async function readCall(calls: TraceCallStore, projectId: string, id: string): Promise<CallSchema | undefined> {
  for await (const page of calls.queryCalls({ projectId, filter: { call_ids: [id] }, limit: 1, sortBy: [] })) return page[0];
  return undefined;
}

/** Every live call a query matches, read page by page. */
export async function readCalls(calls: TraceCallStore, query: Parameters<TraceCallStore["queryCalls"]>[0]): Promise<CallSchema[]> {
  const out: CallSchema[] = [];
  for await (const page of calls.queryCalls(query)) out.push(...page);
  return out;
}

/**
 * The ref of an op the server publishes for calls it records (`Evaluation.evaluate`,
 * `<model>.predict`, ...), under its exact name so that the ref resolves and its name reads as
 * Weave's constants. Publishing is idempotent: the same name and source give the same version.
 */
export async function publishedOpRef(v2: V2ObjectResources, projectId: string, name: string, sourceCode: string, wbUserId: string): Promise<string> {
  const op = await v2.publishOp(projectId, name, sourceCode, wbUserId);
  return objectRefUri(projectId, op.objectId, op.digest, "op");
}
