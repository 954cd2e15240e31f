import fs from "node:fs";
import path from "node:path";
import { describe, isObject, type JsonObject, JsonFields, readJsonObject } from "./json-file.js";

/** A model's chat templates: the default one and any named ones (e.g. `tool_use`). */
export interface ChatTemplates {
  default: string | undefined;
  named: Record<string, string>;
}

/** tokenizer_config.json, normalized. `raw` is the whole object, for the tokenizer library. */
export interface TokenizerConfig {
  chatTemplates: ChatTemplates;
  bosToken: string | undefined;
  eosToken: string | undefined;
  padToken: string | undefined;
  unkToken: string | undefined;
  additionalSpecialTokens: string[];
  /** Added tokens declared here (`added_tokens_decoder`), by id. */
  addedTokens: Map<number, { content: string; special: boolean }>;
  cleanUpTokenizationSpaces: boolean;
  modelMaxLength: number | undefined;
  raw: JsonObject;
}

const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "pad_token", "unk_token"] as const;

/**
 * Reads `<dir>/tokenizer_config.json` (required) and `<dir>/chat_template.jinja` (optional; when
 * present it is the default chat template, as transformers ≥ 4.49 saves it).
 */
export function readTokenizerConfig(dir: string): TokenizerConfig {
  const file = path.join(dir, "tokenizer_config.json");
  const config = parseTokenizerConfig(readJsonObject(file), file);
  const jinjaFile = path.join(dir, "chat_template.jinja");
  if (fs.existsSync(jinjaFile)) config.chatTemplates.default = fs.readFileSync(jinjaFile, "utf8");
  return config;
}

export function parseTokenizerConfig(json: JsonObject, file = "tokenizer_config.json"): TokenizerConfig {
  const fields: JsonFields = new JsonFields(file, json);
  const [bosToken, eosToken, padToken, unkToken] = SPECIAL_TOKEN_KEYS.map((key) => tokenContent(fields, key));
  const additional = fields.raw("additional_special_tokens") ?? [];
  if (!Array.isArray(additional)) return fields.fail("additional_special_tokens", `must be a list, got ${describe(additional)}`);
  const additionalFields = new JsonFields(file, { ...additional }, "additional_special_tokens");
  const additionalSpecialTokens = additional.map((_, i) => tokenContent(additionalFields, String(i))).filter((token) => token !== undefined);
  return {
    chatTemplates: parseChatTemplates(fields),
    bosToken,
    eosToken,
    padToken,
    unkToken,
    additionalSpecialTokens,
    addedTokens: parseAddedTokens(fields),
    cleanUpTokenizationSpaces: fields.optionalBoolean("clean_up_tokenization_spaces") ?? false,
    modelMaxLength: modelMaxLength(fields),
    raw: json,
  };
}

/** A special token is written as its text or as an AddedToken object `{"content": ...}`. */
function tokenContent(fields: JsonFields, key: string): string | undefined {
  const value = fields.raw(key);
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (isObject(value) && typeof value.content === "string") return value.content;
  return fields.fail(key, `must be a token string or an object with "content", got ${describe(value)}`);
}

/** `chat_template` is a string, a list of `{name, template}`, or an object of named templates. */
function parseChatTemplates(fields: JsonFields): ChatTemplates {
  const value = fields.raw("chat_template");
  if (value === undefined) return { default: undefined, named: {} };
  if (typeof value === "string") return { default: value, named: {} };
  const named: Record<string, string> = {};
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (!isObject(item) || typeof item.name !== "string" || typeof item.template !== "string") {
        fields.fail(`chat_template.${i}`, 'must be an object with string "name" and "template"');
      }
      named[item.name as string] = item.template as string;
    });
  } else if (isObject(value)) {
    for (const [name, template] of Object.entries(value)) {
      if (typeof template !== "string") fields.fail(`chat_template.${name}`, `must be a template string, got ${describe(template)}`);
      named[name] = template;
    }
  } else {
    fields.fail("chat_template", `must be a string or a list of named templates, got ${describe(value)}`);
  }
  const { default: defaultTemplate, ...others } = named;
  return { default: defaultTemplate, named: others };
}

function parseAddedTokens(fields: JsonFields): TokenizerConfig["addedTokens"] {
  const decoder = fields.optionalObject("added_tokens_decoder");
  const tokens: TokenizerConfig["addedTokens"] = new Map();
  if (!decoder) return tokens;
  for (const [id, value] of Object.entries(decoder.object)) {
    if (!/^\d+$/.test(id)) decoder.fail(id, "must be keyed by a token id");
    if (!isObject(value) || typeof value.content !== "string") return decoder.fail(id, 'must be an object with string "content"');
    tokens.set(Number(id), { content: value.content, special: value.special === true });
  }
  return tokens;
}

/** transformers writes a huge sentinel (1e30) for "no limit"; treat anything that large as unset. */
function modelMaxLength(fields: JsonFields): number | undefined {
  const value = fields.optionalNumber("model_max_length", (v) => (v > 0 ? undefined : "must be > 0"));
  return value === undefined || value > Number.MAX_SAFE_INTEGER ? undefined : Math.floor(value);
}
