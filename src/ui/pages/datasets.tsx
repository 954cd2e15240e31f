import type { Api } from "../api.js";
import { JsonView } from "../components/json-view.js";
import { formatTime } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route, withQuery } from "../route.js";
import type { ProjectList } from "../types.js";
import { type DatasetVersion, latestVersions, tableDigest } from "../view/datasets.js";

const ROWS_PER_PAGE = 50;

export function listDatasetVersions(api: Api, entity: string, project: string): Promise<DatasetVersion[]> {
  return api.traceGetLines<DatasetVersion>(`/v2/${encodeURIComponent(entity)}/${encodeURIComponent(project)}/datasets?limit=1000`);
}

/** A project's datasets (their newest versions) and the rows of the selected one, page by page. */
export function DatasetsPage({ api, route, projects }: { api: Api; route: Route; projects: ProjectList }) {
  const traced = projects.data.filter((project) => project.traces);
  const project = route.query.project ?? traced[0]?.name;
  if (!project) return <p class="muted">No datasets yet.</p>;
  return <ProjectDatasets api={api} route={route} entity={projects.entity} project={project} traced={traced} />;
}

function ProjectDatasets({ api, route, entity, project, traced }: { api: Api; route: Route; entity: string; project: string; traced: ProjectList["data"] }) {
  const versions = useLoad(() => listDatasetVersions(api, entity, project), [api, entity, project]);
  const datasets = versions.data ? latestVersions(versions.data) : [];
  const selected = datasets.find((dataset) => dataset.object_id === route.query.dataset) ?? datasets[0];
  return (
    <div>
      <div class="filters">
        <label>
          Project{" "}
          <select value={project} onChange={(event) => (location.hash = formatRoute(["datasets"], { project: (event.target as HTMLSelectElement).value }))}>
            {traced.map((candidate) => (
              <option key={candidate.name} value={candidate.name}>
                {candidate.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      {versions.error && <p class="error">{versions.error}</p>}
      {versions.data && datasets.length === 0 && <p class="muted">No datasets in this project. Select calls on the Traces page to start one.</p>}
      {datasets.length > 0 && (
        <div class="rollouts">
          <aside class="group-list">
            <ul data-testid="datasets">
              {datasets.map((dataset) => (
                <li key={dataset.object_id} class={dataset.object_id === selected?.object_id ? "selected" : ""}>
                  <a href={withQuery(route, { project, dataset: dataset.object_id, offset: undefined })}>
                    {dataset.name ?? dataset.object_id} <span class="muted">v{dataset.version_index}</span>
                  </a>
                </li>
              ))}
            </ul>
          </aside>
          {selected && <DatasetRows api={api} route={route} projectId={`${entity}/${project}`} dataset={selected} />}
        </div>
      )}
    </div>
  );
}

function DatasetRows({ api, route, projectId, dataset }: { api: Api; route: Route; projectId: string; dataset: DatasetVersion }) {
  const offset = Math.max(0, Number(route.query.offset ?? 0) || 0);
  const digest = tableDigest(dataset.rows);
  const count = useLoad(() => api.trace<{ count: number }>("/table/query_stats", { project_id: projectId, digest }), [api, projectId, digest]);
  const rows = useLoad(() => api.trace<{ rows: { digest: string; val: unknown }[] }>("/table/query", { project_id: projectId, digest, offset, limit: ROWS_PER_PAGE }), [api, projectId, digest, offset]);
  const total = count.data?.count ?? 0;
  return (
    <section>
      <h3>
        {dataset.name ?? dataset.object_id}{" "}
        <span class="muted">
          v{dataset.version_index} · {formatTime(dataset.created_at)}
        </span>
      </h3>
      {dataset.description && <p>{dataset.description}</p>}
      <p class="muted" data-testid="dataset-count">
        {total} rows
      </p>
      {(rows.error || count.error) && <p class="error">{rows.error ?? count.error}</p>}
      <ol start={offset + 1} class="dataset-rows" data-testid="dataset-rows">
        {(rows.data?.rows ?? []).map((row) => (
          <li key={row.digest}>
            <JsonView value={row.val} openDepth={1} />
          </li>
        ))}
      </ol>
      <div class="pager">
        {offset > 0 && <a href={withQuery(route, { offset: Math.max(0, offset - ROWS_PER_PAGE) })}>← previous</a>}
        {offset + ROWS_PER_PAGE < total && <a href={withQuery(route, { offset: offset + ROWS_PER_PAGE })}>next →</a>}
      </div>
    </section>
  );
}
