/** Dataset versions (`GET /v2/{entity}/{project}/datasets`) and rows made from calls. */

export interface DatasetVersion {
  object_id: string;
  digest: string;
  version_index: number;
  created_at: string;
  name: string | null;
  description: string | null;
  /** The table of rows: `weave:///{project}/table/{digest}`. */
  rows: string;
}

/** The newest version of each dataset, newest dataset first. */
export function latestVersions(versions: readonly DatasetVersion[]): DatasetVersion[] {
  const latest = new Map<string, DatasetVersion>();
  for (const version of versions) {
    const known = latest.get(version.object_id);
    if (!known || version.version_index > known.version_index) latest.set(version.object_id, version);
  }
  return [...latest.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.object_id.localeCompare(b.object_id)));
}

/** The digest of a table ref, for the table API. */
export function tableDigest(ref: string): string | undefined {
  return /\/table\/([0-9a-f]+)$/.exec(ref)?.[1];
}

/**
 * A dataset row from a call: its inputs and output, and where it came from. Examples for SFT are
 * then the calls' inputs (the prompt) and outputs (the completion).
 */
export function callToDatasetRow(call: { id: string; op_name: string; inputs?: unknown; output?: unknown }): Record<string, unknown> {
  return { inputs: call.inputs ?? {}, output: call.output ?? null, source_call_id: call.id, source_op: call.op_name };
}
