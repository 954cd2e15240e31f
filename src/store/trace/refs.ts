import { TraceBadRequest } from "./errors.js";

/**
 * External Weave refs (`docs/api/trace.md#refs`):
 * `weave:///{entity}/{project}/object|op/{name}:{version}[/{edge}/{value}...]`,
 * `weave:///{entity}/{project}/table/{digest}[/id/{row}]` and `weave:///{entity}/{project}/call/{id}`.
 * Extra path values are percent-encoded; edges are `key`, `attr`, `index` and `id`.
 */
export type WeaveRef = ObjectRef | TableRef | CallRef;

export interface ObjectRef {
  kind: "object" | "op";
  entity: string;
  project: string;
  name: string;
  version: string;
  extra: string[];
}

export interface TableRef {
  kind: "table";
  entity: string;
  project: string;
  digest: string;
  extra: string[];
}

export interface CallRef {
  kind: "call";
  entity: string;
  project: string;
  id: string;
  extra: string[];
}

export const WEAVE_REF_PREFIX = "weave:///";
const EDGE_NAMES = new Set(["key", "attr", "index", "id"]);

/** Whether Weave treats a string as a ref. */
export function isWeaveRefString(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(WEAVE_REF_PREFIX);
}

export class InvalidRefError extends TraceBadRequest {}

export function parseWeaveRef(uri: string): WeaveRef {
  if (!uri.startsWith(WEAVE_REF_PREFIX)) throw new InvalidRefError(`Invalid URI: ${uri}. Must start with ${WEAVE_REF_PREFIX}`);
  const parts = uri.slice(WEAVE_REF_PREFIX.length).split("/");
  if (parts.length < 4) throw new InvalidRefError(`Invalid URI: ${uri}. Must have at least 4 parts`);
  const [entity, project, kind, head, ...rest] = parts as [string, string, string, string, ...string[]];
  if (!entity || !project) throw new InvalidRefError(`Invalid URI: ${uri}. Entity and project must not be empty`);
  const extra = parseExtra(uri, rest);
  switch (kind) {
    case "object":
    case "op": {
      const pieces = head.split(":");
      if (pieces.length !== 2 || !pieces[0] || !pieces[1]) throw new InvalidRefError(`Invalid URI: ${uri}. Expected {name}:{version}`);
      return { kind, entity, project, name: pieces[0], version: pieces[1], extra };
    }
    case "table":
      if (!head) throw new InvalidRefError(`Invalid URI: ${uri}. Missing table digest`);
      return { kind, entity, project, digest: head, extra };
    case "call":
      if (!head) throw new InvalidRefError(`Invalid URI: ${uri}. Missing call id`);
      return { kind, entity, project, id: head, extra };
    default:
      throw new InvalidRefError(`Unknown ref kind: ${kind}`);
  }
}

function parseExtra(uri: string, raw: string[]): string[] {
  if (raw.length === 0 || (raw.length === 1 && raw[0] === "")) return [];
  const extra = raw.map(unquote);
  if (extra.length % 2 !== 0) throw new InvalidRefError(`Invalid URI: ${uri}. Extra fields must be key-value pairs.`);
  for (let i = 0; i < extra.length; i += 2) {
    if (!EDGE_NAMES.has(extra[i] as string)) throw new InvalidRefError(`Invalid URI: ${uri}. Invalid extra edge name at index ${i}`);
    if (extra[i] === "index" && !/^-?[0-9]+$/.test((extra[i + 1] as string).trim())) {
      throw new InvalidRefError(`Invalid URI: ${uri}. Invalid list edge value at index ${i + 1}`);
    }
  }
  return extra;
}

/** `urllib.parse.unquote`: undecodable sequences stay as they are. */
function unquote(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** `urllib.parse.quote(s, safe="")`. */
function quote(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function formatRef(ref: WeaveRef): string {
  const base = `${WEAVE_REF_PREFIX}${ref.entity}/${ref.project}/`;
  const tail = ref.extra.length > 0 ? `/${ref.extra.map(quote).join("/")}` : "";
  switch (ref.kind) {
    case "object":
    case "op":
      return `${base}${ref.kind}/${ref.name}:${ref.version}${tail}`;
    case "table":
      return `${base}table/${ref.digest}${tail}`;
    case "call":
      return `${base}call/${ref.id}${tail}`;
  }
}

export function objectRefUri(projectId: string, objectId: string, digest: string, kind: "object" | "op" = "object"): string {
  return `${WEAVE_REF_PREFIX}${projectId}/${kind}/${objectId}:${digest}`;
}

export function tableRefUri(projectId: string, digest: string): string {
  return `${WEAVE_REF_PREFIX}${projectId}/table/${digest}`;
}

/** The name in `weave:///entity/project/op|object/name:version[...]`, or undefined for other strings. */
export function refName(value: string): string | undefined {
  const match = /^weave:\/\/\/[^/]+\/[^/]+\/(?:op|object)\/([^/:]+)(?::|$)/.exec(value);
  return match?.[1];
}
