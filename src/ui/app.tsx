import { useMemo, useState } from "preact/hooks";
import { Api } from "./api.js";
import { useLoad, useRoute } from "./hooks.js";
import { DatasetsPage } from "./pages/datasets.js";
import { EvaluationsPage } from "./pages/evaluations.js";
import { LoginPage } from "./pages/login.js";
import { ModelPage } from "./pages/model.js";
import { ModelsPage } from "./pages/models.js";
import { RolloutsPage } from "./pages/rollouts.js";
import { TracesPage } from "./pages/traces.js";
import { formatRoute, type Route } from "./route.js";
import { forgetKey, storedKey, storeKey, traceBasePath } from "./session.js";
import type { ProjectList } from "./types.js";

export function App() {
  const [key, setKey] = useState(storedKey);
  const [notice, setNotice] = useState<string | undefined>();
  const logIn = (newKey: string) => {
    storeKey(newKey);
    setNotice(undefined);
    setKey(newKey);
  };
  const logOut = (message?: string) => {
    forgetKey();
    setNotice(message);
    setKey(null);
  };
  if (!key) return <LoginPage traceBase={traceBasePath()} onLogin={logIn} notice={notice} />;
  return <Shell apiKey={key} onLogout={logOut} />;
}

function Shell({ apiKey, onLogout }: { apiKey: string; onLogout: (message?: string) => void }) {
  const api = useMemo(() => new Api(apiKey, traceBasePath()), [apiKey]);
  const route = useRoute();
  const projects = useLoad(() => api.get<ProjectList>("/v1/preview/projects"), [api]);
  if (projects.error && /API key/i.test(projects.error)) {
    // The key was revoked while this tab held it.
    queueMicrotask(() => onLogout(projects.error));
  }
  const section = route.path[0] ?? "models";
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="#/">
          Flywheel
        </a>
        <nav>
          <a href={formatRoute(["models"])} class={section === "models" || section === "jobs" ? "active" : ""}>
            Models
          </a>
          <a href={formatRoute(["traces"])} class={section === "traces" ? "active" : ""}>
            Traces
          </a>
          <a href={formatRoute(["evaluations"])} class={section === "evaluations" ? "active" : ""}>
            Evaluations
          </a>
          <a href={formatRoute(["datasets"])} class={section === "datasets" ? "active" : ""}>
            Datasets
          </a>
        </nav>
        <span class="spacer" />
        {projects.data && (
          <span class="entity" title="The entity of this API key">
            {projects.data.entity}
          </span>
        )}
        <button type="button" class="link" onClick={() => onLogout()}>
          Log out
        </button>
      </header>
      <main>{projects.data ? <Page api={api} route={route} projects={projects.data} /> : projects.error ? <p class="error">{projects.error}</p> : <p class="muted">Loading…</p>}</main>
    </div>
  );
}

function Page({ api, route, projects }: { api: Api; route: Route; projects: ProjectList }) {
  const [section, id, sub] = route.path;
  if (section === undefined || (section === "models" && id === undefined)) return <ModelsPage api={api} route={route} />;
  if (section === "models" && id !== undefined) return <ModelPage api={api} route={route} modelId={id} entity={projects.entity} />;
  if (section === "jobs" && id !== undefined && sub === "rollouts") return <RolloutsPage api={api} route={route} jobId={id} />;
  if (section === "traces") return <TracesPage api={api} route={route} projects={projects} />;
  if (section === "datasets") return <DatasetsPage api={api} route={route} projects={projects} />;
  if (section === "evaluations") return <EvaluationsPage api={api} route={route} projects={projects} />;
  return (
    <p class="error">
      No page at this address. <a href="#/">Go to the models</a>.
    </p>
  );
}
