import { useMemo } from "preact/hooks";
import type { Api } from "../api.js";
import { Chat } from "../components/chat.js";
import { CallFeedback } from "../components/feedback.js";
import { DownloadJson, JsonView } from "../components/json-view.js";
import { formatTime } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { type Route, withQuery } from "../route.js";
import type { TraceCall } from "../types.js";
import { opDisplayName } from "../view/call-query.js";
import { buildCallTree, flattenTree } from "../view/call-tree.js";
import { callMessages } from "../view/messages.js";
import { latency, statusOf } from "../view/call-status.js";

/** Most calls of one trace the tree shows. */
const TRACE_CAP = 2000;

/** One call: its trace as a tree with a timeline, its conversation when it is a chat call, and its data. */
export function CallDetail({ api, route, projectId, callId }: { api: Api; route: Route; projectId: string; callId: string }) {
  const call = useLoad(() => api.trace<{ call: TraceCall }>("/call/read", { project_id: projectId, id: callId, include_costs: true }), [api, projectId, callId]);
  const traceId = call.data?.call.trace_id;
  const trace = useLoad(
    () =>
      traceId
        ? api.traceLines<TraceCall>("/calls/stream_query", {
            project_id: projectId,
            filter: { trace_ids: [traceId] },
            sort_by: [{ field: "started_at", direction: "asc" }],
            limit: TRACE_CAP,
            columns: ["id", "op_name", "display_name", "trace_id", "parent_id", "started_at", "ended_at", "exception", "summary"],
          })
        : Promise.resolve([]),
    [api, projectId, traceId],
  );
  const rows = useMemo(() => flattenTree(buildCallTree(trace.data ?? [])), [trace.data]);
  if (call.error) return <aside class="call-detail error">{call.error}</aside>;
  if (!call.data) return <aside class="call-detail muted">Loading…</aside>;
  const c = call.data.call;
  const messages = callMessages(c.inputs, c.output);
  const usage = (c.summary?.usage ?? null) as Record<string, unknown> | null;
  const costs = ((c.summary?.weave as Record<string, unknown> | undefined)?.costs ?? null) as Record<string, unknown> | null;
  return (
    <aside class="call-detail" data-testid="call-detail">
      <h3>
        {c.display_name || opDisplayName(c.op_name)} <span class={`badge status-${statusOf(c)}`}>{statusOf(c)}</span>
      </h3>
      <p class="muted">
        {formatTime(c.started_at)} · {latency(c)} · <code>{c.id}</code>
      </p>
      <h4>Trace</h4>
      <div class="trace-tree" data-testid="trace-tree">
        {rows.map((node) => (
          <a key={node.call.id} class={`tree-row${node.call.id === c.id ? " selected" : ""}`} href={withQuery(route, { call: node.call.id })}>
            <span class="tree-name" style={{ paddingLeft: `${node.depth * 14}px` }}>
              {node.call.display_name || opDisplayName(node.call.op_name)}
            </span>
            <span class="timeline">
              <span class={`bar status-${statusOf(node.call)}`} style={{ left: `${node.offset * 100}%`, width: `${Math.max(node.width * 100, 0.5)}%` }} />
            </span>
          </a>
        ))}
        {trace.data && trace.data.length >= TRACE_CAP && <p class="muted">Showing the first {TRACE_CAP} calls of this trace.</p>}
      </div>
      {c.exception && (
        <>
          <h4>Exception</h4>
          <pre class="error">{c.exception}</pre>
        </>
      )}
      {messages && (
        <>
          <h4>Conversation</h4>
          <Chat messages={messages} />
        </>
      )}
      <h4>Feedback</h4>
      <CallFeedback api={api} projectId={projectId} callId={c.id} />
      {usage && Object.keys(usage).length > 0 && (
        <>
          <h4>Usage{costs ? " and cost" : ""}</h4>
          <JsonView value={costs ? { usage, costs } : usage} openDepth={2} />
        </>
      )}
      <h4>
        Inputs <DownloadJson value={c.inputs} filename={`${c.id}-inputs.json`} />
      </h4>
      <JsonView value={c.inputs} />
      <h4>
        Output <DownloadJson value={c.output} filename={`${c.id}-output.json`} />
      </h4>
      <JsonView value={c.output} />
      <h4>Attributes and summary</h4>
      <JsonView value={{ attributes: c.attributes, summary: c.summary }} openDepth={0} />
    </aside>
  );
}
