import type { Api } from "../api.js";
import { formatNumber, formatTime, StatusBadge } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route } from "../route.js";
import type { CursorPage, Job, Model, StepMetrics } from "../types.js";
import { latestReward } from "../view/history-charts.js";

interface ModelSummary {
  model: Model;
  step: number;
  reward: number | undefined;
  lastJob: Job | undefined;
}

/** Every trainable model of the entity with where it stands: step, newest reward, last job. */
export function ModelsPage({ api, route }: { api: Api; route: Route }) {
  const project = route.query.project;
  const models = useLoad(async () => {
    const list = await api.get<{ data: Model[] }>(`/v1/preview/models${project ? `?project=${encodeURIComponent(project)}` : ""}`);
    return Promise.all(list.data.map((model) => summarize(api, model)));
  }, [api, project]);
  return (
    <div>
      <h2>Models{project ? ` in ${project}` : ""}</h2>
      {models.error && <p class="error">{models.error}</p>}
      {models.data && models.data.length === 0 && <p class="muted">No trainable models yet. Register one with POST /v1/preview/models.</p>}
      {models.data && models.data.length > 0 && (
        <table class="grid" data-testid="models">
          <thead>
            <tr>
              <th>Model</th>
              <th>Base model</th>
              <th class="num">Step</th>
              <th class="num">Latest reward</th>
              <th>Last job</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {models.data.map(({ model, step, reward, lastJob }) => (
              <tr key={model.id}>
                <td>
                  <a href={formatRoute(["models", model.id])}>
                    <span class="muted">{model.project}/</span>
                    {model.name}
                  </a>
                </td>
                <td>{model.base_model}</td>
                <td class="num">{step}</td>
                <td class="num">{formatNumber(reward)}</td>
                <td>{lastJob ? <StatusBadge status={lastJob.status} /> : <span class="muted">none</span>}</td>
                <td>{formatTime(model.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {models.loading && !models.data && <p class="muted">Loading…</p>}
    </div>
  );
}

async function summarize(api: Api, model: Model): Promise<ModelSummary> {
  const [checkpoints, jobs, history] = await Promise.all([
    api.get<CursorPage<{ step: number }>>(`/v1/preview/models/${model.id}/checkpoints?order=desc&limit=1`),
    api.get<CursorPage<Job>>(`/v1/preview/models/${model.id}/training-jobs?limit=1`),
    api.get<{ data: StepMetrics[] }>(`/v1/preview/models/${model.id}/history`),
  ]);
  return { model, step: checkpoints.data[0]?.step ?? 0, reward: latestReward(history.data), lastJob: jobs.data[0] };
}
