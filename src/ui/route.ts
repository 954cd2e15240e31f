/**
 * Every page's state lives in the URL hash (`#/models/ID?tab=jobs`), so a link reproduces what
 * the sender saw and the back button steps through it. Path segments and query values are
 * percent-encoded; empty values are dropped to keep links short.
 */

export interface Route {
  /** Decoded path segments: `#/jobs/abc/rollouts` → ["jobs", "abc", "rollouts"]. */
  path: string[];
  query: Record<string, string>;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#/, "");
  const [pathPart = "", queryPart = ""] = splitOnce(text, "?");
  const path = pathPart
    .split("/")
    .filter((segment) => segment !== "")
    .map(safeDecode);
  const query: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(queryPart)) if (value !== "") query[key] = value;
  return { path, query };
}

export function formatRoute(path: readonly string[], query: Record<string, string | number | boolean | undefined | null> = {}): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    if (value === undefined || value === null || value === "" || value === false) continue;
    params.set(key, value === true ? "1" : String(value));
  }
  const search = params.toString();
  return `#/${path.map(encodeURIComponent).join("/")}${search ? `?${search}` : ""}`;
}

/** The same route with some query values replaced (undefined or "" removes one). */
export function withQuery(route: Route, changes: Record<string, string | number | boolean | undefined | null>): string {
  return formatRoute(route.path, { ...route.query, ...changes });
}

function splitOnce(text: string, separator: string): [string, string] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, ""] : [text.slice(0, index), text.slice(index + 1)];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
