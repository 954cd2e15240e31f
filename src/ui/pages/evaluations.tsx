import type { Api } from "../api.js";
import { JsonView } from "../components/json-view.js";
import { formatNumber, formatTime } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route, withQuery } from "../route.js";
import type { ProjectList, TraceCall } from "../types.js";
import { statusOf } from "../view/call-status.js";
import { compareRows, type EvalRow, flattenScores, scorerPaths } from "../view/eval-compare.js";

/** Evaluation runs are `Evaluation.evaluate` calls; their output holds each scorer's summary. */
export function EvaluationsPage({ api, route, projects }: { api: Api; route: Route; projects: ProjectList }) {
  const traced = projects.data.filter((project) => project.traces);
  const project = route.query.project ?? traced[0]?.name;
  if (!project) return <p class="muted">No evaluations yet: run a Weave evaluation and its runs appear here.</p>;
  const projectId = `${projects.entity}/${project}`;
  if (route.path[1] === "compare" && route.query.a && route.query.b) return <ComparePage api={api} entity={projects.entity} project={project} a={route.query.a} b={route.query.b} />;
  return <EvaluationRuns api={api} route={route} projects={projects} project={project} projectId={projectId} />;
}

function EvaluationRuns({ api, route, projects, project, projectId }: { api: Api; route: Route; projects: ProjectList; project: string; projectId: string }) {
  const traced = projects.data.filter((candidate) => candidate.traces);
  const selected = (route.query.sel ?? "").split(",").filter(Boolean);
  const runs = useLoad(
    () =>
      api.traceLines<TraceCall>("/calls/stream_query", {
        project_id: projectId,
        filter: { op_names: [`weave:///${projectId}/op/Evaluation.evaluate:*`] },
        sort_by: [{ field: "started_at", direction: "desc" }],
        limit: 200,
      }),
    [api, projectId],
  );
  // A is the older run (the baseline), B the newer; the list is newest first.
  const position = (id: string) => runs.data?.findIndex((run) => run.id === id) ?? -1;
  const compared = selected.length === 2 ? [...selected].sort((x, y) => position(y) - position(x)) : undefined;
  const toggle = (id: string) => {
    const next = selected.includes(id) ? selected.filter((other) => other !== id) : [...selected, id].slice(-2);
    location.hash = withQuery(route, { sel: next.join(",") });
  };
  return (
    <div>
      <div class="filters">
        <label>
          Project{" "}
          <select value={project} onChange={(event) => (location.hash = formatRoute(["evaluations"], { project: (event.target as HTMLSelectElement).value }))}>
            {traced.map((candidate) => (
              <option key={candidate.name} value={candidate.name}>
                {candidate.name}
              </option>
            ))}
          </select>
        </label>{" "}
        {compared ? (
          <a class="button" href={formatRoute(["evaluations", "compare"], { project, a: compared[0], b: compared[1] })}>
            Compare the two selected
          </a>
        ) : (
          <span class="muted">Select two runs to compare them.</span>
        )}
      </div>
      {runs.error && <p class="error">{runs.error}</p>}
      {runs.data && runs.data.length === 0 && <p class="muted">No evaluation runs in this project.</p>}
      {runs.data && runs.data.length > 0 && (
        <table class="grid" data-testid="evaluation-runs">
          <thead>
            <tr>
              <th />
              <th>Run</th>
              <th>Model</th>
              <th>Status</th>
              <th>Scores</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((run) => (
              <tr key={run.id}>
                <td>
                  <input type="checkbox" checked={selected.includes(run.id)} onChange={() => toggle(run.id)} aria-label={`Select ${run.id}`} />
                </td>
                <td>
                  <a href={formatRoute(["traces"], { project, call: run.id })}>{run.display_name || run.id.slice(0, 8)}</a>
                </td>
                <td>{refName(run.inputs?.model)}</td>
                <td>
                  <span class={`badge status-${statusOf(run)}`}>{statusOf(run)}</span>
                </td>
                <td class="metrics">
                  {Object.entries(flattenScores(run.output))
                    .map(([name, value]) => `${name}=${formatNumber(value)}`)
                    .join("  ")}
                </td>
                <td>{formatTime(run.started_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

interface EvalResults {
  rows: EvalRow[];
  total_rows: number;
  summary: {
    evaluations: { evaluation_call_id: string; display_name: string | null; model_ref: string | null; scorer_stats: { scorer_key: string; path: string | null; numeric_mean: number | null; pass_rate: number | null }[] }[];
  } | null;
}

function ComparePage({ api, entity, project, a, b }: { api: Api; entity: string; project: string; a: string; b: string }) {
  const results = useLoad(
    () =>
      api.trace<EvalResults>(`/v2/${encodeURIComponent(entity)}/${encodeURIComponent(project)}/eval_results/query`, {
        evaluation_call_ids: [a, b],
        include_raw_data_rows: true,
        resolve_row_refs: true,
        include_summary: true,
        limit: 1000,
      }),
    [api, entity, project, a, b],
  );
  if (results.error) return <p class="error">{results.error}</p>;
  if (!results.data) return <p class="muted">Loading…</p>;
  const rows = compareRows(results.data.rows, a, b);
  const paths = scorerPaths(rows);
  const summaries = results.data.summary?.evaluations ?? [];
  const stat = (id: string, key: string) => {
    const entry = summaries.find((summary) => summary.evaluation_call_id === id)?.scorer_stats.find((stats) => (stats.path ? `${stats.scorer_key}.${stats.path}` : stats.scorer_key) === key);
    return entry ? (entry.numeric_mean ?? entry.pass_rate) : null;
  };
  const keys = [...new Set(summaries.flatMap((summary) => summary.scorer_stats.map((stats) => (stats.path ? `${stats.scorer_key}.${stats.path}` : stats.scorer_key))))].sort();
  const label = (id: string) => {
    const summary = summaries.find((entry) => entry.evaluation_call_id === id);
    return `${refName(summary?.model_ref) || id.slice(0, 8)}`;
  };
  return (
    <div>
      <p class="crumbs">
        <a href={formatRoute(["evaluations"], { project, sel: `${a},${b}` })}>Evaluations</a> / compare
      </p>
      <h2>
        A: {label(a)} · B: {label(b)}
      </h2>
      <h3>Scores</h3>
      <table class="grid" data-testid="compare-summary">
        <thead>
          <tr>
            <th>Scorer</th>
            <th class="num">A</th>
            <th class="num">B</th>
            <th class="num">B − A</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const left = stat(a, key);
            const right = stat(b, key);
            const delta = left !== null && right !== null ? right - left : null;
            return (
              <tr key={key}>
                <td>{key}</td>
                <td class="num">{formatNumber(left)}</td>
                <td class="num">{formatNumber(right)}</td>
                <td class={`num ${delta === null ? "" : delta > 0 ? "positive" : delta < 0 ? "negative" : ""}`}>{formatNumber(delta)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <h3>
        Rows{" "}
        <span class="muted">
          ({rows.filter((row) => row.differs).length} of {rows.length} differ; those first)
        </span>
      </h3>
      <table class="grid compare-rows" data-testid="compare-rows">
        <thead>
          <tr>
            <th>Input</th>
            <th>A output</th>
            <th>B output</th>
            {paths.map((path) => (
              <th key={path} class="num">
                {path} A → B
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.digest} class={row.differs ? "differs" : ""}>
              <td>
                <JsonView value={row.input} openDepth={1} />
              </td>
              <td>{row.a ? <JsonView value={row.a.output} /> : <span class="muted">not run</span>}</td>
              <td>{row.b ? <JsonView value={row.b.output} /> : <span class="muted">not run</span>}</td>
              {paths.map((path) => (
                <td key={path} class="num">
                  {formatNumber(row.a?.scores[path])} → {formatNumber(row.b?.scores[path])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `weave:///e/p/object/name:digest` → name. */
function refName(ref: unknown): string {
  if (typeof ref !== "string") return "";
  const match = /^weave:\/\/\/[^/]+\/[^/]+\/(?:object|op)\/([^:]+)/.exec(ref);
  return match ? match[1]! : ref;
}
