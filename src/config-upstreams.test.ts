import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

describe("FLYWHEEL_UPSTREAMS", () => {
  it("maps base model ids to upstream servers, with defaults for the optional fields", () => {
    const upstreams = JSON.stringify({
      "org/a": { url: "http://gpu:8000/v1/" },
      "org/b": { url: "https://vllm.internal/v1", api_key: "secret", model: "served-b", adapter_dir: "shared/adapters", upstream_adapter_dir: "/mnt/adapters" },
    });
    const config = loadConfig({}, { FLYWHEEL_UPSTREAMS: upstreams });
    expect(config.upstreams).toEqual([
      { modelId: "org/a", baseUrl: "http://gpu:8000/v1", apiKey: undefined, upstreamModel: "org/a", adapterDir: undefined, upstreamAdapterDir: undefined },
      { modelId: "org/b", baseUrl: "https://vllm.internal/v1", apiKey: "secret", upstreamModel: "served-b", adapterDir: expect.stringMatching(/\/shared\/adapters$/), upstreamAdapterDir: "/mnt/adapters" },
    ]);
    expect(loadConfig({}, {}).upstreams).toEqual([]);
  });

  it("refuses what it cannot use, naming the entry and the field", () => {
    const load = (raw: string) => () => loadConfig({}, { FLYWHEEL_UPSTREAMS: raw });
    expect(load("{not json")).toThrow(ConfigError);
    expect(load("[]")).toThrow("FLYWHEEL_UPSTREAMS must be a JSON object");
    expect(load('{"m": {}}')).toThrow('FLYWHEEL_UPSTREAMS["m"].url is required');
    expect(load('{"m": {"url": "gpu:8000"}}')).toThrow("must be http:// or https://");
    expect(load('{"m": {"url": "http://gpu/v1", "key": "x"}}')).toThrow('unknown field "key"');
    expect(load('{"m": {"url": "http://gpu/v1", "upstream_adapter_dir": "relative"}}')).toThrow("must be an absolute path");
    expect(load('{"m": "http://gpu/v1"}')).toThrow('FLYWHEEL_UPSTREAMS["m"] must be an object');
  });

  it("FLYWHEEL_ALLOW_RUNTIME_LORA is 0 or 1", () => {
    expect(loadConfig({}, {}).allowRuntimeLora).toBe(false);
    expect(loadConfig({}, { FLYWHEEL_ALLOW_RUNTIME_LORA: "1" }).allowRuntimeLora).toBe(true);
    expect(() => loadConfig({}, { FLYWHEEL_ALLOW_RUNTIME_LORA: "yes" })).toThrow("FLYWHEEL_ALLOW_RUNTIME_LORA must be 0 or 1");
  });
});
