import { useEffect, useMemo, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { StepChart } from "../components/chart.js";
import { CopyButton, formatNumber, formatTime, StatusBadge } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route, withQuery } from "../route.js";
import type { Checkpoint, CursorPage, Job, JobEvent, Model, StepMetrics } from "../types.js";
import { historyCharts } from "../view/history-charts.js";

const LIVE_POLL_MS = 2000;

/** A model: its charts per step, its jobs (live while one is active) and its checkpoints. */
export function ModelPage({ api, route, modelId }: { api: Api; route: Route; modelId: string; entity: string }) {
  const model = useLoad(() => api.get<Model>(`/v1/preview/models/${modelId}`), [api, modelId]);
  // While a job is queued or running, everything on the page follows it.
  const [live, setLive] = useState(false);
  const poll = live ? LIVE_POLL_MS : undefined;
  const jobs = useLoad(() => api.get<CursorPage<Job>>(`/v1/preview/models/${modelId}/training-jobs?limit=50`), [api, modelId], poll);
  const active = jobs.data?.data.some((job) => job.status === "queued" || job.status === "running") ?? false;
  useEffect(() => setLive(active), [active]);
  const history = useLoad(() => api.get<{ data: StepMetrics[] }>(`/v1/preview/models/${modelId}/history`), [api, modelId], poll);
  const checkpoints = useLoad(() => api.get<CursorPage<Checkpoint>>(`/v1/preview/models/${modelId}/checkpoints?order=desc&limit=100`), [api, modelId], poll);
  // The job just ended: read the final metrics and checkpoint once more.
  useEffect(() => {
    if (!active) {
      history.reload();
      checkpoints.reload();
    }
  }, [active]);
  const charts = useMemo(() => (history.data ? historyCharts(history.data.data) : []), [history.data]);
  const jobList = jobs.data?.data ?? [];

  if (model.error) return <p class="error">{model.error}</p>;
  if (!model.data) return <p class="muted">Loading…</p>;
  const m = model.data;
  const base = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  return (
    <div>
      <p class="crumbs">
        <a href={formatRoute(["models"])}>Models</a> / <a href={formatRoute(["models"], { project: m.project })}>{m.project}</a>
      </p>
      <h2>
        {m.name} {live && <span class="badge status-running">live</span>}
      </h2>
      <p class="muted">
        Base model {m.base_model} · created {formatTime(m.created_at)} · inference name <code>{base}</code> <CopyButton text={base} />
      </p>

      <div class="charts">
        {history.error && <p class="error">{history.error}</p>}
        {charts.map((spec) => (
          <StepChart key={spec.id} spec={spec} />
        ))}
      </div>

      <h3>Jobs</h3>
      <JobsTable api={api} route={route} jobs={jobList} />

      <h3>Checkpoints</h3>
      {checkpoints.error && <p class="error">{checkpoints.error}</p>}
      {checkpoints.data && <CheckpointsTable api={api} modelId={modelId} base={base} checkpoints={checkpoints.data.data} onChange={checkpoints.reload} />}
    </div>
  );
}

function JobsTable({ api, route, jobs }: { api: Api; route: Route; jobs: Job[] }) {
  if (jobs.length === 0) return <p class="muted">No training jobs yet.</p>;
  const open = route.query.job;
  return (
    <table class="grid" data-testid="jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Kind</th>
          <th>Status</th>
          <th class="num">Step</th>
          <th>Created</th>
          <th>Ended</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => [
          <tr key={job.id}>
            <td>
              <a href={withQuery(route, { job: open === job.id ? undefined : job.id })} title="Show events">
                <code>{job.id.slice(0, 8)}</code>
              </a>
            </td>
            <td>{job.kind}</td>
            <td>
              <StatusBadge status={job.status} />
              {job.error_message && <span class="error small"> {job.error_message}</span>}
            </td>
            <td class="num">{job.step ?? "—"}</td>
            <td>{formatTime(job.created_at)}</td>
            <td>{formatTime(job.ended_at)}</td>
            <td>{job.kind === "rl" && <a href={formatRoute(["jobs", job.id, "rollouts"])}>Rollouts</a>}</td>
          </tr>,
          open === job.id && (
            <tr key={`${job.id}-events`}>
              <td colSpan={7}>
                <JobEvents api={api} job={job} />
              </td>
            </tr>
          ),
        ])}
      </tbody>
    </table>
  );
}

function JobEvents({ api, job }: { api: Api; job: Job }) {
  const active = job.status === "queued" || job.status === "running";
  const events = useLoad(() => allEvents(api, job.id), [api, job.id], active ? LIVE_POLL_MS : undefined);
  if (events.error) return <p class="error">{events.error}</p>;
  if (!events.data) return <p class="muted">Loading events…</p>;
  if (events.data.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol class="events">
      {events.data.map((event) => (
        <li key={event.id}>
          <span class="event-type">{event.type}</span>{" "}
          {Object.entries(event.data)
            .map(([name, value]) => `${name}=${typeof value === "number" ? formatNumber(value) : String(value)}`)
            .join("  ")}
        </li>
      ))}
    </ol>
  );
}

async function allEvents(api: Api, jobId: string): Promise<JobEvent[]> {
  const events: JobEvent[] = [];
  let after = "";
  for (;;) {
    const page = await api.get<CursorPage<JobEvent>>(`/v1/preview/training-jobs/${jobId}/events?limit=100${after ? `&after=${after}` : ""}`);
    events.push(...page.data);
    if (!page.has_more) return events;
    after = page.last_id;
  }
}

function CheckpointsTable({ api, modelId, base, checkpoints, onChange }: { api: Api; modelId: string; base: string; checkpoints: Checkpoint[]; onChange: () => void }) {
  const [error, setError] = useState<string | undefined>();
  if (checkpoints.length === 0) return <p class="muted">No checkpoints yet: the first training job creates one.</p>;
  const remove = async (step: number) => {
    if (!confirm(`Delete checkpoint step ${step}? Its weights are removed for good.`)) return;
    try {
      await api.delete(`/v1/preview/models/${modelId}/checkpoints`, { steps: [step] });
      setError(undefined);
      onChange();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <div>
      {error && <p class="error">{error}</p>}
      <table class="grid" data-testid="checkpoints">
        <thead>
          <tr>
            <th class="num">Step</th>
            <th>Metrics</th>
            <th>Inference name</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {checkpoints.map((checkpoint) => (
            <tr key={checkpoint.id}>
              <td class="num">{checkpoint.step}</td>
              <td class="metrics">
                {Object.entries(checkpoint.metrics)
                  .map(([name, value]) => `${name}=${formatNumber(value)}`)
                  .join("  ") || <span class="muted">—</span>}
              </td>
              <td>
                <code>{`${base}:step${checkpoint.step}`}</code> <CopyButton text={`${base}:step${checkpoint.step}`} />
              </td>
              <td>
                <button type="button" class="small danger" onClick={() => remove(checkpoint.step)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
