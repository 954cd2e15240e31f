import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { makeTempDir } from "../../testing/stores.js";
import { parseTokenizerConfig, readTokenizerConfig } from "./tokenizer-config.js";

const FILE = "/m/tokenizer_config.json";
const dir = makeTempDir("flywheel-tokcfg-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("tokenizer_config.json", () => {
  it("reads special tokens as strings or AddedToken objects", () => {
    const config = parseTokenizerConfig(
      {
        bos_token: { __type: "AddedToken", content: "<s>", lstrip: false },
        eos_token: "</s>",
        pad_token: null,
        additional_special_tokens: ["<a>", { content: "<b>" }],
        added_tokens_decoder: { "0": { content: "<s>", special: true }, "5": { content: "<x>", special: false } },
        clean_up_tokenization_spaces: true,
        model_max_length: 1e30,
      },
      FILE,
    );
    expect(config).toMatchObject({ bosToken: "<s>", eosToken: "</s>", padToken: undefined, unkToken: undefined, additionalSpecialTokens: ["<a>", "<b>"], cleanUpTokenizationSpaces: true, modelMaxLength: undefined });
    expect([...config.addedTokens]).toEqual([
      [0, { content: "<s>", special: true }],
      [5, { content: "<x>", special: false }],
    ]);
    expect(parseTokenizerConfig({ model_max_length: 4096 }, FILE)).toMatchObject({ modelMaxLength: 4096, cleanUpTokenizationSpaces: false, chatTemplates: { default: undefined, named: {} } });
  });

  it("reads a chat template string, the list of named templates, and a named-template object", () => {
    expect(parseTokenizerConfig({ chat_template: "T" }, FILE).chatTemplates).toEqual({ default: "T", named: {} });
    const list = parseTokenizerConfig(
      {
        chat_template: [
          { name: "default", template: "D" },
          { name: "tool_use", template: "U" },
        ],
      },
      FILE,
    );
    expect(list.chatTemplates).toEqual({ default: "D", named: { tool_use: "U" } });
    expect(parseTokenizerConfig({ chat_template: { rag: "R" } }, FILE).chatTemplates).toEqual({ default: undefined, named: { rag: "R" } });
  });

  it("prefers chat_template.jinja as the default template", () => {
    fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: "old" }));
    fs.writeFileSync(path.join(dir, "chat_template.jinja"), "{{ messages[0].content }}");
    expect(readTokenizerConfig(dir).chatTemplates.default).toBe("{{ messages[0].content }}");
  });

  it("names the file and field of malformed entries", () => {
    expectCheckpointError(() => parseTokenizerConfig({ eos_token: 5 }, FILE), FILE, "eos_token", /token string or an object/);
    expectCheckpointError(() => parseTokenizerConfig({ additional_special_tokens: "x" }, FILE), FILE, "additional_special_tokens", /must be a list/);
    expectCheckpointError(() => parseTokenizerConfig({ additional_special_tokens: [1] }, FILE), FILE, "additional_special_tokens.0", /token string/);
    expectCheckpointError(() => parseTokenizerConfig({ chat_template: 3 }, FILE), FILE, "chat_template", /string or a list of named templates/);
    expectCheckpointError(() => parseTokenizerConfig({ chat_template: [{ name: "x" }] }, FILE), FILE, "chat_template.0", /"name" and "template"/);
    expectCheckpointError(() => parseTokenizerConfig({ chat_template: { x: 1 } }, FILE), FILE, "chat_template.x", /template string/);
    expectCheckpointError(() => parseTokenizerConfig({ added_tokens_decoder: { abc: { content: "x" } } }, FILE), FILE, "added_tokens_decoder.abc", /keyed by a token id/);
    expectCheckpointError(() => parseTokenizerConfig({ added_tokens_decoder: { "1": "x" } }, FILE), FILE, "added_tokens_decoder.1", /"content"/);
    const missing = path.join(dir, "nothing");
    expectCheckpointError(() => readTokenizerConfig(missing), path.join(missing, "tokenizer_config.json"), undefined, /is missing/);
    fs.writeFileSync(path.join(dir, "tokenizer_config.json"), "{not json");
    expectCheckpointError(() => readTokenizerConfig(dir), path.join(dir, "tokenizer_config.json"), undefined, /is not valid JSON/);
    fs.writeFileSync(path.join(dir, "tokenizer_config.json"), "[1]");
    expectCheckpointError(() => readTokenizerConfig(dir), path.join(dir, "tokenizer_config.json"), undefined, /must contain a JSON object/);
  });
});
