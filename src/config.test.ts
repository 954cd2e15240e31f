import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundledModelsDir, ConfigError, loadConfig } from "./config.js";

describe("loadConfig", () => {
  it("defaults to 127.0.0.1:8000 with SQLite in ./data", () => {
    const config = loadConfig({}, {});
    expect(config.port).toBe(8000);
    expect(config.host).toBe("127.0.0.1");
    expect(config.dataDir).toBe(path.resolve("./data"));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.modelDirs).toEqual([path.resolve("./data/models"), bundledModelsDir]);
    expect(config.traceBasePath).toBe("/trace");
  });

  it("prefers flags over the environment", () => {
    const env = { FLYWHEEL_PORT: "9000", FLYWHEEL_HOST: "0.0.0.0", FLYWHEEL_DATA_DIR: "/tmp/env-dir" };
    expect(loadConfig({}, env)).toMatchObject({ port: 9000, host: "0.0.0.0", dataDir: "/tmp/env-dir" });
    expect(loadConfig({ port: "9100", host: "::1", "data-dir": "/tmp/flag-dir" }, env)).toMatchObject({ port: 9100, host: "::1", dataDir: "/tmp/flag-dir" });
  });

  it("reads DATABASE_URL, FLYWHEEL_API_KEY and FLYWHEEL_MODELS", () => {
    const config = loadConfig({ "data-dir": "/d" }, { DATABASE_URL: "postgres://u@h/db", FLYWHEEL_API_KEY: "k".repeat(20), FLYWHEEL_MODELS: "/m1,/m2" });
    expect(config.databaseUrl).toBe("postgres://u@h/db");
    expect(config.apiKey).toBe("k".repeat(20));
    expect(config.modelDirs).toEqual(["/d/models", "/m1", "/m2", bundledModelsDir]);
  });

  it("reads the image provider behind /image/create", () => {
    expect(loadConfig({}, {}).imageUpstream).toBeUndefined();
    expect(loadConfig({}, { FLYWHEEL_IMAGE_UPSTREAM: " https://images.example/v1/ " }).imageUpstream).toEqual({ baseUrl: "https://images.example/v1", apiKey: undefined });
    expect(loadConfig({}, { FLYWHEEL_IMAGE_UPSTREAM: "http://h:9/v1", FLYWHEEL_IMAGE_UPSTREAM_API_KEY: "sk-1" }).imageUpstream).toEqual({ baseUrl: "http://h:9/v1", apiKey: "sk-1" });
  });

  it("reads the engine's scheduling settings", () => {
    expect(loadConfig({}, {}).engine).toEqual({
      priorityModels: [],
      maxRunningSequences: undefined,
      maxTokensPerStep: undefined,
      kvCacheBytes: undefined,
      prefixCacheBytes: undefined,
    });
    const env = {
      FLYWHEEL_PRIORITY_MODELS: "org/a, org/b",
      FLYWHEEL_MAX_NUM_SEQS: "8",
      FLYWHEEL_MAX_BATCHED_TOKENS: "256",
      FLYWHEEL_KV_CACHE_MB: "64",
      FLYWHEEL_PREFIX_CACHE_MB: "0",
    };
    expect(loadConfig({}, env).engine).toEqual({
      priorityModels: ["org/a", "org/b"],
      maxRunningSequences: 8,
      maxTokensPerStep: 256,
      kvCacheBytes: 64 * 1024 * 1024,
      prefixCacheBytes: 0,
    });
    expect(loadConfig({}, { FLYWHEEL_PRIORITY_MODELS: "*" }).engine.priorityModels).toBe("all");
  });

  it("reads the job settings, with serve's worker on by default", () => {
    const webTrainingData = { maxBytes: 1024 * 1024 * 1024, timeoutMs: 120_000 };
    expect(loadConfig({}, {}).jobs).toEqual({
      inProcessWorker: true,
      concurrency: 2,
      pollMs: 1000,
      leaseMs: 30000,
      maxAttempts: 3,
      stepDelayMs: 0,
      trainerIdleMs: 300000,
      webTrainingData,
      planMemoryMb: 4096,
      planThreads: 2,
      pytorchBaseModels: [],
    });
    const env = {
      FLYWHEEL_WORKER_CONCURRENCY: "4",
      FLYWHEEL_JOB_POLL_MS: "50",
      FLYWHEEL_JOB_LEASE_MS: "2000",
      FLYWHEEL_JOB_MAX_ATTEMPTS: "1",
      FLYWHEEL_TRAIN_STEP_DELAY_MS: "25",
      FLYWHEEL_TRAINER_IDLE_MS: "0",
      FLYWHEEL_TRAINING_DATA_MAX_MB: "2",
      FLYWHEEL_TRAINING_DATA_TIMEOUT_S: "5",
      FLYWHEEL_JOB_PLAN_MEMORY_MB: "512",
      FLYWHEEL_JOB_PLAN_THREADS: "3",
    };
    expect(loadConfig({}, env).jobs).toEqual({
      inProcessWorker: true,
      concurrency: 4,
      pollMs: 50,
      leaseMs: 2000,
      maxAttempts: 1,
      stepDelayMs: 25,
      trainerIdleMs: 0,
      webTrainingData: { maxBytes: 2 * 1024 * 1024, timeoutMs: 5000 },
      planMemoryMb: 512,
      planThreads: 3,
      pytorchBaseModels: [],
    });
    expect(() => loadConfig({}, { FLYWHEEL_JOB_PLAN_MEMORY_MB: "8" })).toThrow(/FLYWHEEL_JOB_PLAN_MEMORY_MB/);
    expect(() => loadConfig({}, { FLYWHEEL_JOB_PLAN_THREADS: "0" })).toThrow(/FLYWHEEL_JOB_PLAN_THREADS/);
    expect(loadConfig({ "no-worker": true }, {}).jobs.inProcessWorker).toBe(false);
    expect(loadConfig({}, { FLYWHEEL_SERVE_WORKER: "0" }).jobs.inProcessWorker).toBe(false);
    expect(loadConfig({}, { FLYWHEEL_PYTORCH_MODELS: " a/b , c " }).jobs.pytorchBaseModels).toEqual(["a/b", "c"]);
    expect(loadConfig({}, { FLYWHEEL_PYTORCH_MODELS: "*" }).jobs.pytorchBaseModels).toBe("all");
  });

  it("reads the chat limits, with request templates untrusted by default", () => {
    expect(loadConfig({}, {}).chat).toEqual({ trustRequestChatTemplate: false, templateTimeoutMs: 5000, maxPromptChars: 1_000_000, maxMessages: 10_000, maxTools: 1000 });
    expect(loadConfig({ "trust-request-chat-template": true }, {}).chat.trustRequestChatTemplate).toBe(true);
    const env = { FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE: "1", FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS: "250", FLYWHEEL_MAX_PROMPT_CHARS: "5000", FLYWHEEL_MAX_MESSAGES: "3", FLYWHEEL_MAX_TOOLS: "2" };
    expect(loadConfig({}, env).chat).toEqual({ trustRequestChatTemplate: true, templateTimeoutMs: 250, maxPromptChars: 5000, maxMessages: 3, maxTools: 2 });
  });

  it.each([
    [{}, { FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE: "yes" }, /FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE must be 0 or 1/],
    [{}, { FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS: "0" }, /FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS/],
    [{ port: "eighty" }, {}, /--port/],
    [{ port: "70000" }, {}, /between 0 and 65535/],
    [{}, { DATABASE_URL: "mysql://x" }, /DATABASE_URL/],
    [{}, { FLYWHEEL_API_KEY: "short" }, /at least 16/],
    [{}, { FLYWHEEL_BODY_LIMIT_MB: "0" }, /FLYWHEEL_BODY_LIMIT_MB/],
    [{}, { FLYWHEEL_TRACE_BASE_PATH: "/" }, /FLYWHEEL_TRACE_BASE_PATH/],
    [{}, { FLYWHEEL_MAX_NUM_SEQS: "0" }, /FLYWHEEL_MAX_NUM_SEQS/],
    [{}, { FLYWHEEL_KV_CACHE_MB: "lots" }, /FLYWHEEL_KV_CACHE_MB must be an integer/],
    [{}, { FLYWHEEL_MAX_NUM_SEQS: "64", FLYWHEEL_MAX_BATCHED_TOKENS: "32" }, /at least FLYWHEEL_MAX_NUM_SEQS/],
    [{}, { FLYWHEEL_SERVE_WORKER: "yes" }, /FLYWHEEL_SERVE_WORKER/],
    [{}, { FLYWHEEL_JOB_LEASE_MS: "5" }, /FLYWHEEL_JOB_LEASE_MS/],
    [{}, { FLYWHEEL_WORKER_CONCURRENCY: "0" }, /FLYWHEEL_WORKER_CONCURRENCY/],
    [{}, { FLYWHEEL_IMAGE_UPSTREAM: "not a url" }, /FLYWHEEL_IMAGE_UPSTREAM is not a URL/],
    [{}, { FLYWHEEL_IMAGE_UPSTREAM: "ftp://host/v1" }, /must be http:\/\/ or https:\/\//],
    [{}, { FLYWHEEL_IMAGE_UPSTREAM_API_KEY: "sk-x" }, /FLYWHEEL_IMAGE_UPSTREAM \(the image provider's base URL\) is not/],
  ])("rejects invalid settings %#", (flags, env, message) => {
    expect(() => loadConfig(flags, env)).toThrow(ConfigError);
    expect(() => loadConfig(flags, env)).toThrow(message);
  });
});
