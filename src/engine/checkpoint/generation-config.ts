import path from "node:path";
import { JsonFields, readJsonObject, type JsonObject } from "./json-file.js";

/** generation_config.json: the sampling defaults vLLM reads, and the extra EOS ids. */
export interface GenerationConfig {
  temperature: number | undefined;
  topP: number | undefined;
  topK: number | undefined;
  minP: number | undefined;
  repetitionPenalty: number | undefined;
  maxNewTokens: number | undefined;
  bosTokenId: number | undefined;
  padTokenId: number | undefined;
  eosTokenIds: number[];
}

export const EMPTY_GENERATION_CONFIG: GenerationConfig = {
  temperature: undefined,
  topP: undefined,
  topK: undefined,
  minP: undefined,
  repetitionPenalty: undefined,
  maxNewTokens: undefined,
  bosTokenId: undefined,
  padTokenId: undefined,
  eosTokenIds: [],
};

/** Reads `<dir>/generation_config.json`; a checkpoint without one has no defaults. */
export function readGenerationConfig(dir: string): GenerationConfig {
  const file = path.join(dir, "generation_config.json");
  const json = readJsonObject(file, { optional: true });
  return json ? parseGenerationConfig(json, file) : { ...EMPTY_GENERATION_CONFIG, eosTokenIds: [] };
}

export function parseGenerationConfig(json: JsonObject, file = "generation_config.json"): GenerationConfig {
  const fields: JsonFields = new JsonFields(file, json);
  const nonNegative = (value: number) => (value >= 0 ? undefined : "must be ≥ 0");
  const positive = (value: number) => (value > 0 ? undefined : "must be > 0");
  const unit = (value: number) => (value >= 0 && value <= 1 ? undefined : "must be between 0 and 1");
  return {
    temperature: fields.optionalNumber("temperature", nonNegative),
    topP: fields.optionalNumber("top_p", (value) => (value > 0 && value <= 1 ? undefined : "must be in (0, 1]")),
    // transformers writes top_k as an int; -1 or 0 disable it, as in vLLM.
    topK: fields.optionalInt("top_k", -1),
    minP: fields.optionalNumber("min_p", unit),
    repetitionPenalty: fields.optionalNumber("repetition_penalty", positive),
    maxNewTokens: fields.optionalInt("max_new_tokens", 1),
    bosTokenId: fields.intList("bos_token_id")[0],
    padTokenId: fields.intList("pad_token_id")[0],
    eosTokenIds: fields.intList("eos_token_id"),
  };
}

/**
 * The defaults a served model reports (`ModelInfo.generationDefaults`), in vLLM's names: only the
 * fields the file sets. `max_new_tokens` becomes `max_tokens`.
 */
export function generationDefaults(config: GenerationConfig): Record<string, number> {
  const defaults: Record<string, number> = {};
  const put = (key: string, value: number | undefined) => {
    if (value !== undefined) defaults[key] = value;
  };
  put("temperature", config.temperature);
  put("top_p", config.topP);
  put("top_k", config.topK);
  put("min_p", config.minP);
  put("repetition_penalty", config.repetitionPenalty);
  put("max_tokens", config.maxNewTokens);
  return defaults;
}
