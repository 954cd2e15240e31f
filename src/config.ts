import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseUpstreams, type UpstreamConfig, UpstreamConfigError } from "./config-upstreams.js";

/** Everything the service reads from flags and the environment, parsed once and validated. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Unset → SQLite file `flywheel.db` inside `dataDir`. */
  databaseUrl: string | undefined;
  /** `FLYWHEEL_API_KEY`: a key guaranteed to exist for entity `default`. */
  apiKey: string | undefined;
  /** Directories scanned for served base models, in priority order. */
  modelDirs: string[];
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** URL prefix of the Weave-compatible trace API. */
  traceBasePath: string;
  logLevel: string;
  engine: EngineConfig;
  jobs: JobSettings;
  /** `FLYWHEEL_UPSTREAMS`: base models whose inference an upstream OpenAI-compatible server does. */
  upstreams: UpstreamConfig[];
  /** `FLYWHEEL_ALLOW_RUNTIME_LORA`: vLLM's /v1/load_lora_adapter and /v1/unload_lora_adapter are on. */
  allowRuntimeLora: boolean;
  /** `FLYWHEEL_IMAGE_UPSTREAM`: the image provider behind the trace API's `/image/create` (unset: none). */
  imageUpstream: ImageUpstreamConfig | undefined;
  chat: ChatLimits;
}

/** What a chat request may ask of the server before any model runs (docs/configuration.md). */
export interface ChatLimits {
  /** `--trust-request-chat-template` / `FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE`: a request's own `chat_template` is rendered (vLLM's flag). */
  trustRequestChatTemplate: boolean;
  /** `FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS`: longest a template may render. */
  templateTimeoutMs: number;
  /** `FLYWHEEL_MAX_PROMPT_CHARS`: most characters in a rendered prompt, and in a request's messages and tools together. */
  maxPromptChars: number;
  /** `FLYWHEEL_MAX_MESSAGES`: most messages in one request. */
  maxMessages: number;
  /** `FLYWHEEL_MAX_TOOLS`: most tools in one request. */
  maxTools: number;
}

/** An OpenAI-compatible image provider (`POST {baseUrl}/images/generations`). */
export interface ImageUpstreamConfig {
  /** Its OpenAI base URL, without a trailing slash (e.g. `https://api.openai.com/v1`). */
  baseUrl: string;
  /** `FLYWHEEL_IMAGE_UPSTREAM_API_KEY`, sent as `Authorization: Bearer`. */
  apiKey: string | undefined;
}

/** How training jobs are run (docs/api/training.md#job-states). */
export interface JobSettings {
  /** Whether `serve` runs jobs itself; off when separate `flywheel worker` processes do. */
  inProcessWorker: boolean;
  /** Jobs one worker runs at once (on different models). */
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  maxAttempts: number;
  /** A pause after training_started and after each gradient step (0 = none), to throttle jobs. */
  stepDelayMs: number;
  /** How long a trainer thread keeps its base model loaded without a job before it stops. */
  trainerIdleMs: number;
  /** `FLYWHEEL_TRAINING_DATA_MAX_MB` / `FLYWHEEL_TRAINING_DATA_TIMEOUT_S`: limits of SFT data fetched from an http(s) `training_data_url`. */
  webTrainingData: { maxBytes: number; timeoutMs: number };
  /** `FLYWHEEL_JOB_PLAN_MEMORY_MB`: heap of the thread that plans a job for the PyTorch worker pool; a plan that needs more fails its job. */
  planMemoryMb: number;
  /** `FLYWHEEL_JOB_PLAN_THREADS`: most planning threads at once; further plan requests wait for one to finish. */
  planThreads: number;
  /**
   * `FLYWHEEL_PYTORCH_MODELS`: base model ids whose jobs the PyTorch worker pool trains (over the
   * worker protocol) instead of the built-in trainer; "all" (`*`) sends every job there.
   */
  pytorchBaseModels: string[] | "all";
}

/** How the built-in inference engines schedule requests (unset numbers take the engine's defaults). */
export interface EngineConfig {
  /** `FLYWHEEL_PRIORITY_MODELS`: base model ids served with priority scheduling, or "all" (`*`). */
  priorityModels: string[] | "all";
  /** `FLYWHEEL_MAX_NUM_SEQS`: most sequences decoding at once per model. */
  maxRunningSequences: number | undefined;
  /** `FLYWHEEL_MAX_BATCHED_TOKENS`: most tokens per forward pass (decode tokens + prompt chunks). */
  maxTokensPerStep: number | undefined;
  /** `FLYWHEEL_KV_CACHE_MB`: KV cache of the running sequences per model, in bytes. */
  kvCacheBytes: number | undefined;
  /** `FLYWHEEL_PREFIX_CACHE_MB`: KV kept for prefix reuse per model, in bytes (0 turns reuse off). */
  prefixCacheBytes: number | undefined;
}

export class ConfigError extends Error {}

/** The repository root (one level above `src/` or `dist/`). */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Models shipped with the project, always served. */
export const bundledModelsDir = path.join(projectRoot, "models");

export interface ConfigFlags {
  port?: string;
  host?: string;
  "data-dir"?: string;
  /** `serve --no-worker`: leave jobs to separate worker processes. */
  "no-worker"?: boolean;
  /** `serve --trust-request-chat-template`: render the chat_template a request sends. */
  "trust-request-chat-template"?: boolean;
}

type Env = Record<string, string | undefined>;

export function loadConfig(flags: ConfigFlags = {}, env: Env = process.env): Config {
  const port = parseInteger(flags.port ?? env.FLYWHEEL_PORT ?? "8000", "--port / FLYWHEEL_PORT", 0, 65535);
  const host = nonEmpty(flags.host ?? env.FLYWHEEL_HOST ?? "127.0.0.1", "--host / FLYWHEEL_HOST");
  const dataDir = path.resolve(nonEmpty(flags["data-dir"] ?? env.FLYWHEEL_DATA_DIR ?? "./data", "--data-dir / FLYWHEEL_DATA_DIR"));

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for SQLite)");
  }

  const apiKey = env.FLYWHEEL_API_KEY?.trim() || undefined;
  if (apiKey !== undefined && apiKey.length < 16) {
    throw new ConfigError("FLYWHEEL_API_KEY must be at least 16 characters");
  }

  const extraModelDirs = (env.FLYWHEEL_MODELS ?? "")
    .split(/[,:]/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => path.resolve(entry));

  const bodyLimitMb = parseInteger(env.FLYWHEEL_BODY_LIMIT_MB ?? "64", "FLYWHEEL_BODY_LIMIT_MB", 1, 4096);

  let traceBasePath = env.FLYWHEEL_TRACE_BASE_PATH ?? "/trace";
  if (!traceBasePath.startsWith("/")) traceBasePath = `/${traceBasePath}`;
  traceBasePath = traceBasePath.replace(/\/+$/, "");
  if (traceBasePath === "" || traceBasePath === "/v1") {
    throw new ConfigError("FLYWHEEL_TRACE_BASE_PATH must be a path prefix such as /trace, not / or /v1");
  }

  const engine = loadEngineConfig(env);
  if (engine.maxRunningSequences !== undefined && engine.maxTokensPerStep !== undefined && engine.maxTokensPerStep < engine.maxRunningSequences) {
    throw new ConfigError("FLYWHEEL_MAX_BATCHED_TOKENS must be at least FLYWHEEL_MAX_NUM_SEQS (every running sequence takes a token per step)");
  }

  let upstreams: UpstreamConfig[];
  try {
    upstreams = parseUpstreams(env.FLYWHEEL_UPSTREAMS);
  } catch (error) {
    if (error instanceof UpstreamConfigError) throw new ConfigError(error.message);
    throw error;
  }
  const runtimeLora = (env.FLYWHEEL_ALLOW_RUNTIME_LORA ?? "0").trim();
  if (runtimeLora !== "0" && runtimeLora !== "1") throw new ConfigError(`FLYWHEEL_ALLOW_RUNTIME_LORA must be 0 or 1, got '${runtimeLora}'`);

  return {
    port,
    host,
    dataDir,
    databaseUrl,
    apiKey,
    modelDirs: [path.join(dataDir, "models"), ...extraModelDirs, bundledModelsDir],
    bodyLimitBytes: bodyLimitMb * 1024 * 1024,
    traceBasePath,
    logLevel: env.FLYWHEEL_LOG_LEVEL ?? "info",
    engine,
    jobs: loadJobSettings(flags, env),
    upstreams,
    allowRuntimeLora: runtimeLora === "1",
    imageUpstream: loadImageUpstream(env),
    chat: loadChatLimits(flags, env),
  };
}

/** What the command-line clients (`flywheel artifacts`, `flywheel checkpoints`) read to reach a running server. */
export interface ClientEnvironment {
  /** `FLYWHEEL_BASE_URL`. */
  baseUrl: string | undefined;
  /** `FLYWHEEL_API_KEY`, else `WANDB_API_KEY`. */
  apiKey: string | undefined;
}

export function loadClientEnvironment(env: Env = process.env): ClientEnvironment {
  return { baseUrl: env.FLYWHEEL_BASE_URL, apiKey: env.FLYWHEEL_API_KEY ?? env.WANDB_API_KEY };
}

function loadChatLimits(flags: ConfigFlags, env: Env): ChatLimits {
  const trust = (env.FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE ?? "0").trim();
  if (trust !== "0" && trust !== "1") throw new ConfigError(`FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE must be 0 or 1, got '${trust}'`);
  return {
    trustRequestChatTemplate: trust === "1" || flags["trust-request-chat-template"] === true,
    templateTimeoutMs: parseInteger(env.FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS ?? "5000", "FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS", 10, 600_000),
    maxPromptChars: parseInteger(env.FLYWHEEL_MAX_PROMPT_CHARS ?? "1000000", "FLYWHEEL_MAX_PROMPT_CHARS", 1000, 1_000_000_000),
    maxMessages: parseInteger(env.FLYWHEEL_MAX_MESSAGES ?? "10000", "FLYWHEEL_MAX_MESSAGES", 1, 10_000_000),
    maxTools: parseInteger(env.FLYWHEEL_MAX_TOOLS ?? "1000", "FLYWHEEL_MAX_TOOLS", 1, 10_000_000),
  };
}

function loadJobSettings(flags: ConfigFlags, env: Env): JobSettings {
  const serveWorker = (env.FLYWHEEL_SERVE_WORKER ?? "1").trim();
  if (serveWorker !== "0" && serveWorker !== "1") throw new ConfigError(`FLYWHEEL_SERVE_WORKER must be 0 or 1, got '${serveWorker}'`);
  const leaseMs = parseInteger(env.FLYWHEEL_JOB_LEASE_MS ?? "30000", "FLYWHEEL_JOB_LEASE_MS", 100, 3_600_000);
  return {
    inProcessWorker: serveWorker === "1" && flags["no-worker"] !== true,
    concurrency: parseInteger(env.FLYWHEEL_WORKER_CONCURRENCY ?? "2", "FLYWHEEL_WORKER_CONCURRENCY", 1, 256),
    pollMs: parseInteger(env.FLYWHEEL_JOB_POLL_MS ?? "1000", "FLYWHEEL_JOB_POLL_MS", 10, 600_000),
    leaseMs,
    maxAttempts: parseInteger(env.FLYWHEEL_JOB_MAX_ATTEMPTS ?? "3", "FLYWHEEL_JOB_MAX_ATTEMPTS", 1, 100),
    stepDelayMs: parseInteger(env.FLYWHEEL_TRAIN_STEP_DELAY_MS ?? "0", "FLYWHEEL_TRAIN_STEP_DELAY_MS", 0, 3_600_000),
    trainerIdleMs: parseInteger(env.FLYWHEEL_TRAINER_IDLE_MS ?? "300000", "FLYWHEEL_TRAINER_IDLE_MS", 0, 86_400_000),
    webTrainingData: {
      maxBytes: parseInteger(env.FLYWHEEL_TRAINING_DATA_MAX_MB ?? "1024", "FLYWHEEL_TRAINING_DATA_MAX_MB", 1, 1024 * 1024) * 1024 * 1024,
      timeoutMs: parseInteger(env.FLYWHEEL_TRAINING_DATA_TIMEOUT_S ?? "120", "FLYWHEEL_TRAINING_DATA_TIMEOUT_S", 1, 86_400) * 1000,
    },
    planMemoryMb: parseInteger(env.FLYWHEEL_JOB_PLAN_MEMORY_MB ?? "4096", "FLYWHEEL_JOB_PLAN_MEMORY_MB", 64, 1024 * 1024),
    planThreads: parseInteger(env.FLYWHEEL_JOB_PLAN_THREADS ?? "2", "FLYWHEEL_JOB_PLAN_THREADS", 1, 256),
    pytorchBaseModels: parseModelList(env.FLYWHEEL_PYTORCH_MODELS ?? ""),
  };
}

/** A comma-separated list of base model ids, or `*` for all of them. */
function parseModelList(value: string): string[] | "all" {
  const trimmed = value.trim();
  if (trimmed === "*") return "all";
  return trimmed
    .split(",")
    .map((id) => id.trim())
    .filter(Boolean);
}

function loadImageUpstream(env: Env): ImageUpstreamConfig | undefined {
  const url = env.FLYWHEEL_IMAGE_UPSTREAM?.trim() || undefined;
  const apiKey = env.FLYWHEEL_IMAGE_UPSTREAM_API_KEY?.trim() || undefined;
  if (!url) {
    if (apiKey) throw new ConfigError("FLYWHEEL_IMAGE_UPSTREAM_API_KEY is set but FLYWHEEL_IMAGE_UPSTREAM (the image provider's base URL) is not");
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`FLYWHEEL_IMAGE_UPSTREAM is not a URL: '${url}' (expected an OpenAI base URL such as https://api.openai.com/v1)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new ConfigError(`FLYWHEEL_IMAGE_UPSTREAM must be http:// or https://, got '${url}'`);
  return { baseUrl: url.replace(/\/+$/, ""), apiKey };
}

const MIB = 1024 * 1024;

function loadEngineConfig(env: Env): EngineConfig {
  const optional = (name: string, min: number, max: number) => {
    const raw = env[name]?.trim();
    return raw ? parseInteger(raw, name, min, max) : undefined;
  };
  const priority = (env.FLYWHEEL_PRIORITY_MODELS ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const kvCacheMb = optional("FLYWHEEL_KV_CACHE_MB", 1, 1024 * 1024);
  const prefixCacheMb = optional("FLYWHEEL_PREFIX_CACHE_MB", 0, 1024 * 1024);
  return {
    priorityModels: priority.includes("*") ? "all" : priority,
    maxRunningSequences: optional("FLYWHEEL_MAX_NUM_SEQS", 1, 4096),
    maxTokensPerStep: optional("FLYWHEEL_MAX_BATCHED_TOKENS", 1, 1_048_576),
    kvCacheBytes: kvCacheMb === undefined ? undefined : kvCacheMb * MIB,
    prefixCacheBytes: prefixCacheMb === undefined ? undefined : prefixCacheMb * MIB,
  };
}

function parseInteger(raw: string, name: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got '${raw}'`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function nonEmpty(raw: string, name: string): string {
  if (raw.trim() === "") throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
}
