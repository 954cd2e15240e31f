import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { makeTempDir } from "../../testing/stores.js";
import { generationDefaults, parseGenerationConfig, readGenerationConfig } from "./generation-config.js";

const FILE = "/m/generation_config.json";
const dir = makeTempDir("flywheel-gencfg-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("generation_config.json", () => {
  it("reads the sampling defaults and EOS ids (an int or a list)", () => {
    const config = parseGenerationConfig({ temperature: 0.7, top_p: 0.8, top_k: 20, min_p: 0.05, repetition_penalty: 1.05, max_new_tokens: 512, eos_token_id: [7, 3], bos_token_id: 1, pad_token_id: 3, do_sample: true }, FILE);
    expect(config).toEqual({ temperature: 0.7, topP: 0.8, topK: 20, minP: 0.05, repetitionPenalty: 1.05, maxNewTokens: 512, bosTokenId: 1, padTokenId: 3, eosTokenIds: [7, 3] });
    expect(generationDefaults(config)).toEqual({ temperature: 0.7, top_p: 0.8, top_k: 20, min_p: 0.05, repetition_penalty: 1.05, max_tokens: 512 });
    expect(parseGenerationConfig({ eos_token_id: 2 }, FILE).eosTokenIds).toEqual([2]);
    expect(generationDefaults(parseGenerationConfig({ top_k: -1 }, FILE))).toEqual({ top_k: -1 });
  });

  it("is optional", () => {
    expect(readGenerationConfig(dir)).toMatchObject({ temperature: undefined, eosTokenIds: [] });
    fs.writeFileSync(path.join(dir, "generation_config.json"), JSON.stringify({ temperature: 0.6 }));
    expect(readGenerationConfig(dir).temperature).toBe(0.6);
  });

  it("names the file and field of bad values", () => {
    expectCheckpointError(() => parseGenerationConfig({ temperature: -1 }, FILE), FILE, "temperature", /must be ≥ 0/);
    expectCheckpointError(() => parseGenerationConfig({ top_p: 0 }, FILE), FILE, "top_p", /must be in \(0, 1\]/);
    expectCheckpointError(() => parseGenerationConfig({ top_k: 1.5 }, FILE), FILE, "top_k", /must be an integer/);
    expectCheckpointError(() => parseGenerationConfig({ min_p: 2 }, FILE), FILE, "min_p", /between 0 and 1/);
    expectCheckpointError(() => parseGenerationConfig({ repetition_penalty: 0 }, FILE), FILE, "repetition_penalty", /must be > 0/);
    expectCheckpointError(() => parseGenerationConfig({ max_new_tokens: 0 }, FILE), FILE, "max_new_tokens", /at least 1/);
    expectCheckpointError(() => parseGenerationConfig({ eos_token_id: "x" }, FILE), FILE, "eos_token_id", /token id/);
  });
});
