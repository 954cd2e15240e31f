import path from "node:path";

/**
 * An upstream OpenAI-compatible inference server (vLLM, or another Flywheel) that serves one base
 * model in Flywheel's place: chat completions for the base model and its trained checkpoints are
 * forwarded to it, checkpoints as LoRA adapters it loads by path (docs/scale.md).
 */
export interface UpstreamConfig {
  /** The base model id clients use, as Flywheel serves and trains it. */
  modelId: string;
  /** The upstream's OpenAI base URL, ending in `/v1`. */
  baseUrl: string;
  apiKey: string | undefined;
  /** The name the upstream serves the base model under (default: `modelId`). */
  upstreamModel: string;
  /** Where Flywheel puts checkpoint adapters for the upstream to load (unset: the data dir's `checkpoints/`). */
  adapterDir: string | undefined;
  /** The same directory as the upstream's machine sees it (default: the same path). */
  upstreamAdapterDir: string | undefined;
}

export class UpstreamConfigError extends Error {}

const FIELDS = new Set(["url", "api_key", "model", "adapter_dir", "upstream_adapter_dir"]);

/**
 * Parses `FLYWHEEL_UPSTREAMS`: a JSON object from base model id to
 * `{"url", "api_key"?, "model"?, "adapter_dir"?, "upstream_adapter_dir"?}`.
 */
export function parseUpstreams(raw: string | undefined): UpstreamConfig[] {
  if (raw === undefined || raw.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new UpstreamConfigError(`FLYWHEEL_UPSTREAMS must be a JSON object: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw new UpstreamConfigError('FLYWHEEL_UPSTREAMS must be a JSON object like {"org/model": {"url": "http://host:8000/v1"}}');
  return Object.entries(parsed).map(([modelId, entry]) => parseEntry(modelId, entry));
}

function parseEntry(modelId: string, entry: unknown): UpstreamConfig {
  const where = `FLYWHEEL_UPSTREAMS["${modelId}"]`;
  if (modelId.trim() === "") throw new UpstreamConfigError("FLYWHEEL_UPSTREAMS has an empty model id");
  if (!isObject(entry)) throw new UpstreamConfigError(`${where} must be an object with at least "url"`);
  for (const key of Object.keys(entry)) {
    if (!FIELDS.has(key)) throw new UpstreamConfigError(`${where} has an unknown field "${key}" (known: ${[...FIELDS].join(", ")})`);
  }
  const text = (key: string): string | undefined => {
    const value = entry[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") throw new UpstreamConfigError(`${where}.${key} must be a non-empty string`);
    return value.trim();
  };
  const url = text("url");
  if (!url) throw new UpstreamConfigError(`${where}.url is required (the upstream's OpenAI base URL, e.g. http://host:8000/v1)`);
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new UpstreamConfigError(`${where}.url is not a URL: '${url}'`);
  }
  if (parsedUrl.protocol !== "http:" && parsedUrl.protocol !== "https:") throw new UpstreamConfigError(`${where}.url must be http:// or https://, got '${url}'`);
  const adapterDir = text("adapter_dir");
  const upstreamAdapterDir = text("upstream_adapter_dir");
  if (upstreamAdapterDir !== undefined && !path.isAbsolute(upstreamAdapterDir)) throw new UpstreamConfigError(`${where}.upstream_adapter_dir must be an absolute path`);
  return {
    modelId,
    baseUrl: url.replace(/\/+$/, ""),
    apiKey: text("api_key"),
    upstreamModel: text("model") ?? modelId,
    adapterDir: adapterDir === undefined ? undefined : path.resolve(adapterDir),
    upstreamAdapterDir,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
