import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { formatTime } from "../components/status.js";
import { AddToDataset } from "../components/add-to-dataset.js";
import { VirtualList } from "../components/virtual-list.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route, withQuery } from "../route.js";
import type { ProjectList, TraceCall } from "../types.js";
import { COUNT_CAP, callCountLabel, callListLength, type CallCount, isSearchTooShort, MIN_SEARCH_LENGTH } from "../view/call-count.js";
import { callFiltersFromQuery, callQueryBody, isoToLocalInput, localInputToIso, opDisplayName, REACTIONS } from "../view/call-query.js";
import { latency, statusOf } from "../view/call-status.js";
import { CallDetail } from "./call-detail.js";

const PAGE = 100;
const ROW_HEIGHT = 28;

/** Calls of a project: filters in the URL, the count apart from the rows, rows loaded as they scroll into view. */
export function TracesPage({ api, route, projects }: { api: Api; route: Route; projects: ProjectList }) {
  const traced = projects.data.filter((project) => project.traces);
  const project = route.query.project ?? traced[0]?.name;
  if (!project) return <p class="muted">No traces yet. Log calls with the Weave SDK (project "{projects.entity}/&lt;name&gt;") and they appear here.</p>;
  return <ProjectCalls api={api} route={route} traced={traced} entity={projects.entity} project={project} projectId={`${projects.entity}/${project}`} />;
}

function ProjectCalls({ api, route, traced, entity, project, projectId }: { api: Api; route: Route; traced: ProjectList["data"]; entity: string; project: string; projectId: string }) {
  // Calls picked for a dataset; kept while filters change, dropped with the project.
  const [picked, setPicked] = useState<string[]>([]);
  useEffect(() => setPicked([]), [projectId]);
  const togglePick = (id: string) => setPicked((previous) => (previous.includes(id) ? previous.filter((other) => other !== id) : [...previous, id]));
  const filters = callFiltersFromQuery(route.query);
  const body = useMemo(() => callQueryBody(projectId, filters), [projectId, filters.op, filters.status, filters.rootsOnly, filters.text, filters.from, filters.to, filters.reaction]);
  const bodyKey = JSON.stringify(body);
  // Counted up to a cap: counting most of a million calls exactly takes seconds (docs/decisions/ui.md#D-UI-012).
  const count = useLoad(() => api.trace<CallCount>("/calls/query_stats", { ...body, limit: COUNT_CAP }), [api, bodyKey]);
  const ops = useLoad(() => api.trace<{ objs: { object_id: string }[] }>("/objs/query", { project_id: projectId, filter: { is_op: true, latest_only: true } }), [api, projectId]);
  const pages = useCallPages(api, body, bodyKey);
  const selected = route.query.call;

  const [text, setText] = useState(route.query.q ?? "");
  useEffect(() => setText(route.query.q ?? ""), [route.query.q]);
  const [tooShort, setTooShort] = useState(false);
  useEffect(() => setTooShort(isSearchTooShort(route.query.q)), [route.query.q]);
  const go = (changes: Record<string, string | boolean | undefined>) => (location.hash = withQuery(route, { ...changes, call: undefined }));

  return (
    <div class="traces">
      <div class="filters">
        <label>
          Project{" "}
          <select value={project} onChange={(event) => (location.hash = formatRoute(["traces"], { project: (event.target as HTMLSelectElement).value }))}>
            {traced.map((candidate) => (
              <option key={candidate.name} value={candidate.name}>
                {candidate.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Op{" "}
          <select value={filters.op ?? ""} onChange={(event) => go({ op: (event.target as HTMLSelectElement).value })}>
            <option value="">all</option>
            {(ops.data?.objs ?? []).map((op) => (
              <option key={op.object_id} value={op.object_id}>
                {op.object_id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{" "}
          <select value={filters.status ?? ""} onChange={(event) => go({ status: (event.target as HTMLSelectElement).value })}>
            <option value="">all</option>
            <option value="success">success</option>
            <option value="error">error</option>
            <option value="running">running</option>
          </select>
        </label>
        <label>
          From <input type="datetime-local" value={isoToLocalInput(filters.from)} onChange={(event) => go({ from: localInputToIso((event.target as HTMLInputElement).value) })} />
        </label>
        <label>
          to <input type="datetime-local" value={isoToLocalInput(filters.to)} onChange={(event) => go({ to: localInputToIso((event.target as HTMLInputElement).value) })} />
        </label>
        <label>
          Reaction{" "}
          <select value={filters.reaction ?? ""} onChange={(event) => go({ reaction: (event.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {REACTIONS.map((emoji) => (
              <option key={emoji} value={emoji}>
                {emoji}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={filters.rootsOnly} onChange={(event) => go({ roots: (event.target as HTMLInputElement).checked })} /> roots only
        </label>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (isSearchTooShort(text)) setTooShort(true);
            else go({ q: text.trim() });
          }}
        >
          <input
            type="search"
            placeholder="Search inputs, outputs, names"
            value={text}
            onInput={(event) => {
              setText((event.target as HTMLInputElement).value);
              setTooShort(false);
            }}
          />
        </form>
        {tooShort && (
          <span class="error" data-testid="search-hint">
            Search needs at least {MIN_SEARCH_LENGTH} characters
          </span>
        )}
        <span class="muted" data-testid="call-count">
          {count.data ? callCountLabel(count.data) : count.error ? "" : "counting…"}
        </span>
      </div>
      {picked.length > 0 && <AddToDataset api={api} entity={entity} project={project} callIds={picked} />}
      {(count.error || pages.error) && <p class="error">{count.error ?? pages.error}</p>}
      <div class="traces-body">
        <div class="call-list" data-testid="call-list">
          <div class="call-row head">
            <span class="pick-space">Op</span>
            <span>Status</span>
            <span>Started</span>
            <span class="num">Latency</span>
          </div>
          <VirtualList
            count={count.data ? callListLength(count.data, pages.loaded, PAGE) : 0}
            rowHeight={ROW_HEIGHT}
            height={560}
            onRange={pages.want}
            row={(index) => {
              const call = pages.at(index);
              if (!call) return <div class="call-line muted">…</div>;
              return (
                <div class={`call-line${call.id === selected ? " selected" : ""}`}>
                  <input type="checkbox" checked={picked.includes(call.id)} onChange={() => togglePick(call.id)} aria-label={`Pick call ${call.id}`} />
                  <a class="call-row" href={withQuery(route, { call: call.id })}>
                    <span class="op">{call.display_name || opDisplayName(call.op_name)}</span>
                    <span class={`status-${statusOf(call)}`}>{statusOf(call)}</span>
                    <span>{formatTime(call.started_at)}</span>
                    <span class="num">{latency(call)}</span>
                  </a>
                </div>
              );
            }}
          />
        </div>
        {selected && <CallDetail api={api} route={route} projectId={projectId} callId={selected} />}
      </div>
    </div>
  );
}

/** Pages of the call list by offset, fetched on demand (newest first) and dropped when the query changes. */
function useCallPages(api: Api, body: object, bodyKey: string) {
  const [pages, setPages] = useState<Map<number, TraceCall[]>>(new Map());
  const [error, setError] = useState<string | undefined>();
  const requested = useRef(new Set<number>());
  const generation = useRef(0);
  useEffect(() => {
    generation.current++;
    requested.current = new Set();
    setPages(new Map());
    setError(undefined);
  }, [bodyKey]);
  const want = useCallback(
    (first: number, last: number) => {
      const mine = generation.current;
      for (let page = Math.floor(first / PAGE); page * PAGE < last; page++) {
        if (requested.current.has(page)) continue;
        requested.current.add(page);
        api.traceLines<TraceCall>("/calls/stream_query", { ...body, sort_by: [{ field: "started_at", direction: "desc" }], offset: page * PAGE, limit: PAGE, columns: CALL_LIST_COLUMNS }).then(
          (calls) => mine === generation.current && setPages((previous) => new Map(previous).set(page, calls)),
          (caught: Error) => mine === generation.current && setError(caught.message),
        );
      }
    },
    [api, bodyKey],
  );
  const loaded = useMemo(() => new Map([...pages].map(([page, calls]) => [page, calls.length])), [pages]);
  return { at: (index: number) => pages.get(Math.floor(index / PAGE))?.[index % PAGE], want, error, loaded };
}

/** The list shows no inputs or outputs, so it does not fetch them. */
const CALL_LIST_COLUMNS = ["id", "op_name", "display_name", "trace_id", "parent_id", "started_at", "ended_at", "exception", "summary"];
