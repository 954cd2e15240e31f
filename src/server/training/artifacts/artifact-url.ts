/**
 * Artifact URLs as `training_data_url` carries them: `wandb-artifact:///entity/project/name:vN`,
 * with two or three slashes, `artifact:` as a synonym scheme, and `:latest` or no alias for the
 * newest version.
 */
export interface ArtifactUrlRef {
  entity: string;
  project: string;
  name: string;
  version: number | "latest";
}

const URL_PATTERN = /^(?:wandb-artifact|artifact):\/\/\/?([^/:]+)\/([^/:]+)\/([^/:]+)(?::([^/:]+))?$/;

/** The parsed reference, or a sentence saying what is wrong with the URL. */
export function parseArtifactUrl(url: string): ArtifactUrlRef | string {
  const match = URL_PATTERN.exec(url.trim());
  if (!match) return "expected an artifact URL of the form wandb-artifact:///entity/project/name:vN";
  const [, entity, project, name, alias] = match as unknown as [string, string, string, string, string | undefined];
  if (alias === undefined || alias === "latest") return { entity, project, name, version: "latest" };
  const version = /^v(\d{1,9})$/.exec(alias);
  if (!version) return `unknown artifact alias '${alias}': use vN (e.g. v0) or latest`;
  return { entity, project, name, version: Number(version[1]) };
}

export function formatArtifactUrl(ref: { entity: string; project: string; name: string; version: number }): string {
  return `wandb-artifact:///${ref.entity}/${ref.project}/${ref.name}:v${ref.version}`;
}
