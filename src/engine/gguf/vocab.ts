import path from "node:path";
import { CheckpointError } from "../checkpoint/errors.js";
import { isObject, type JsonObject, readJsonObject } from "../checkpoint/json-file.js";
import { readTokenizerConfig } from "../checkpoint/tokenizer-config.js";
import { bool, type GgufValue, int32s, str, strings, TokenType, u32 } from "./format.js";

/** Split regexes of the pre-tokenizers llama.cpp implements natively, by its `tokenizer.ggml.pre` name. */
const SPLIT_PATTERNS: Record<string, string> = {
  qwen2: String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  "llama-bpe": String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
};

const SPECIAL_TOKEN_TYPES = ["bos", "eos", "unk", "sep", "pad", "cls", "mask"] as const;
/** GGUF key suffixes of the special token ids (llama.cpp spells "seperator" so). */
const SPECIAL_TOKEN_KEYS: Record<(typeof SPECIAL_TOKEN_TYPES)[number], string> = {
  bos: "bos_token_id",
  eos: "eos_token_id",
  unk: "unknown_token_id",
  sep: "seperator_token_id",
  pad: "padding_token_id",
  cls: "cls_token_id",
  mask: "mask_token_id",
};

/**
 * The `tokenizer.*` metadata of a byte-level BPE tokenizer (GPT-2, Qwen2, Llama 3 style), the way
 * llama.cpp's converter writes it: one token string per embedding row (rows the tokenizer does
 * not define become `[PAD<id>]` of type UNUSED), token types, merges, special token ids,
 * add-BOS/EOS flags and the chat templates.
 */
export function tokenizerMetadata(dir: string, vocabSize: number): Map<string, GgufValue> {
  const file = path.join(dir, "tokenizer.json");
  const json = readJsonObject(file);
  const model = json.model;
  if (!isObject(model) || model.type !== "BPE" || !isObject(model.vocab)) throw new CheckpointError(file, "model", "is not a BPE model; GGUF export supports byte-level BPE tokenizers");
  if (!isObject(json.decoder) || json.decoder.type !== "ByteLevel") throw new CheckpointError(file, "decoder", "is not ByteLevel; GGUF export supports byte-level BPE tokenizers");
  const config = readTokenizerConfig(dir);

  const tokens: (string | undefined)[] = new Array(vocabSize);
  const types: number[] = new Array(vocabSize).fill(TokenType.NORMAL);
  for (const [piece, id] of Object.entries(model.vocab)) {
    if (typeof id === "number" && id >= 0 && id < vocabSize) tokens[id] = piece;
  }
  const addedTokens = Array.isArray(json.added_tokens) ? json.added_tokens.filter(isObject) : [];
  for (const token of addedTokens) {
    const id = token.id;
    const content = token.content;
    if (typeof id !== "number" || typeof content !== "string" || id < 0 || id >= vocabSize) continue;
    const special = token.special === true || config.addedTokens.get(id)?.special === true || looksSpecial(content);
    // User-defined added tokens are matched on raw text; SentencePiece's "▁" stands for a space.
    tokens[id] = special ? content : content.replaceAll("\u2581", " ");
    types[id] = special ? TokenType.CONTROL : TokenType.USER_DEFINED;
  }
  for (let id = 0; id < vocabSize; id++) {
    if (tokens[id] === undefined) {
      tokens[id] = `[PAD${id}]`;
      types[id] = TokenType.UNUSED;
    }
  }

  const metadata = new Map<string, GgufValue>();
  metadata.set("tokenizer.ggml.model", str("gpt2"));
  metadata.set("tokenizer.ggml.pre", str(preTokenizerName(json, file)));
  metadata.set("tokenizer.ggml.tokens", strings(tokens as string[]));
  metadata.set("tokenizer.ggml.token_type", int32s(types));
  metadata.set("tokenizer.ggml.merges", strings(mergeStrings(model.merges, file)));

  const idOfContent = (content: string | undefined) => addedTokens.find((token) => token.content === content)?.id;
  const modelConfig = readJsonObject(path.join(dir, "config.json"));
  const rawConfig = config.raw;
  for (const type of SPECIAL_TOKEN_TYPES) {
    const entry = rawConfig[`${type}_token`];
    const content = typeof entry === "string" ? entry : isObject(entry) && typeof entry.content === "string" ? entry.content : undefined;
    const id = idOfContent(content) ?? modelConfig[`${type}_token_id`];
    if (typeof id === "number" && Number.isInteger(id) && id >= 0 && id < vocabSize) metadata.set(`tokenizer.ggml.${SPECIAL_TOKEN_KEYS[type]}`, u32(id));
  }
  const addFlags = templateAddFlags(json, config.bosToken, config.eosToken);
  for (const type of ["bos", "eos"] as const) {
    const flag = typeof rawConfig[`add_${type}_token`] === "boolean" ? (rawConfig[`add_${type}_token`] as boolean) : addFlags[type];
    if (flag !== undefined) metadata.set(`tokenizer.ggml.add_${type}_token`, bool(flag));
  }

  const { default: defaultTemplate, named } = config.chatTemplates;
  const names = Object.keys(named).filter((name) => name !== "default");
  for (const name of names) metadata.set(`tokenizer.chat_template.${name.replace(/[^A-Za-z0-9]/g, "_")}`, str(named[name]!));
  if (names.length > 0) metadata.set("tokenizer.chat_templates", strings(names.map((name) => name.replace(/[^A-Za-z0-9]/g, "_"))));
  const template = defaultTemplate ?? named.default;
  if (template !== undefined) metadata.set("tokenizer.chat_template", str(template));
  return metadata;
}

/**
 * llama.cpp implements pre-tokenizers natively and picks one by name. A GPT-2 ByteLevel
 * pre-tokenizer, or a Split with the Qwen2 or Llama 3 regex before a regex-free ByteLevel, maps to
 * its name; anything else would tokenize differently there, so it is refused.
 */
export function preTokenizerName(json: JsonObject, file: string): string {
  const pre = json.pre_tokenizer;
  if (isObject(pre) && pre.type === "ByteLevel" && pre.use_regex !== false) return "gpt-2";
  if (isObject(pre) && pre.type === "Sequence" && Array.isArray(pre.pretokenizers) && pre.pretokenizers.length === 2) {
    const [split, byteLevel] = pre.pretokenizers as unknown[];
    if (isObject(split) && split.type === "Split" && isObject(split.pattern) && isObject(byteLevel) && byteLevel.type === "ByteLevel" && byteLevel.use_regex === false) {
      const name = Object.keys(SPLIT_PATTERNS).find((key) => SPLIT_PATTERNS[key] === (split.pattern as JsonObject).Regex);
      if (name) return name;
    }
  }
  throw new CheckpointError(file, "pre_tokenizer", "is not one llama.cpp implements (supported: GPT-2 byte-level, the Qwen2 and the Llama 3 split patterns)");
}

/** Merges as "left right" strings; pairs whose parts contain spaces encode them as U+0120, like the converter. */
function mergeStrings(merges: unknown, file: string): string[] {
  if (!Array.isArray(merges)) throw new CheckpointError(file, "model.merges", "is missing");
  return merges.map((merge, i) => {
    if (typeof merge === "string") return merge;
    if (Array.isArray(merge) && merge.length === 2 && typeof merge[0] === "string" && typeof merge[1] === "string") {
      return merge.map((part: string) => part.replaceAll(" ", "\u0120")).join(" ");
    }
    throw new CheckpointError(file, `model.merges.${i}`, "is neither a string nor a pair of strings");
  });
}

/** Whether a TemplateProcessing post-processor adds BOS first / EOS last to a single sequence. */
function templateAddFlags(json: JsonObject, bos: string | undefined, eos: string | undefined): { bos?: boolean; eos?: boolean } {
  const post = json.post_processor;
  const processors = isObject(post) ? (Array.isArray(post.processors) ? post.processors : [post]) : [];
  for (const processor of processors) {
    if (!isObject(processor) || processor.type !== "TemplateProcessing" || !Array.isArray(processor.single) || processor.single.length < 2) continue;
    const specialId = (item: unknown) => (isObject(item) && isObject(item.SpecialToken) ? item.SpecialToken.id : undefined);
    const first = specialId(processor.single[0]);
    const last = specialId(processor.single[processor.single.length - 1]);
    return { bos: first !== undefined ? first === bos : undefined, eos: last !== undefined ? last === eos : undefined };
  }
  return {};
}

/** Added tokens some models forget to mark special (the converter's list). */
function looksSpecial(token: string): boolean {
  return (
    ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(token) ||
    (token.startsWith("<|") && token.endsWith("|>")) ||
    (token.startsWith("<\uff5c") && token.endsWith("\uff5c>")) ||
    (token.startsWith("<unused") && token.endsWith(">"))
  );
}
