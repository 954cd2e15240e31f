import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import { listDatasetVersions } from "../pages/datasets.js";
import { formatRoute } from "../route.js";
import type { TraceCall } from "../types.js";
import { callToDatasetRow, latestVersions, tableDigest } from "../view/datasets.js";

/**
 * Adds the selected calls to a dataset as `{inputs, output, source_call_id, source_op}` rows: a new
 * version of the dataset with that name (its rows, then these), or its first version. The calls
 * stay picked afterwards, so the result stays in view.
 */
export function AddToDataset({ api, entity, project, callIds }: { api: Api; entity: string; project: string; callIds: string[] }) {
  const [name, setName] = useState("");
  const [message, setMessage] = useState<{ text: string; error: boolean; link?: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const projectId = `${entity}/${project}`;
  const add = async (event: Event) => {
    event.preventDefault();
    const datasetName = name.trim();
    if (!datasetName) return setMessage({ text: "Name the dataset first.", error: true });
    setBusy(true);
    try {
      const calls = await api.traceLines<TraceCall>("/calls/stream_query", { project_id: projectId, filter: { call_ids: callIds }, sort_by: [{ field: "started_at", direction: "asc" }] });
      const existing = latestVersions(await listDatasetVersions(api, entity, project)).find((version) => version.name === datasetName);
      let rows: unknown[] = [];
      if (existing) {
        const digest = tableDigest(existing.rows);
        rows = (await api.trace<{ rows: { val: unknown }[] }>("/table/query", { project_id: projectId, digest })).rows.map((row) => row.val);
      }
      const created = await api.post<{ object_id: string; version_index: number }>(`${api.traceBase}/v2/${encodeURIComponent(entity)}/${encodeURIComponent(project)}/datasets`, {
        name: datasetName,
        rows: [...rows, ...calls.map(callToDatasetRow)],
      });
      setMessage({ text: `Added ${calls.length} call(s): ${datasetName} v${created.version_index} has ${rows.length + calls.length} rows.`, error: false, link: formatRoute(["datasets"], { project, dataset: created.object_id }) });
    } catch (caught) {
      setMessage({ text: (caught as Error).message, error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="add-to-dataset" onSubmit={add} data-testid="add-to-dataset">
      <span>{callIds.length} selected</span>
      <input placeholder="Dataset name" value={name} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
      <button type="submit" disabled={busy || callIds.length === 0}>
        Add to dataset
      </button>
      {message && (
        <span class={message.error ? "error" : "muted"} role="status">
          {message.text} {message.link && <a href={message.link}>Open it</a>}
        </span>
      )}
    </form>
  );
}
