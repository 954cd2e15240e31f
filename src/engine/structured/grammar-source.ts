import type { CompiledGrammar, Grammar, GrammarCompiler } from "@mlc-ai/web-xgrammar";
import { choiceGrammar, hasLoneSurrogate, nonAsciiCharClass } from "./ebnf.js";
import { LarkConversionError, StructuredOutputError } from "./errors.js";
import { type ReadySchema, unsupportedJsonSchemaFeature, withoutAdditionalProperties, xgrammarReadySchema } from "./json-schema.js";
import { larkToEbnf, looksLikeLark } from "./lark.js";
import { xgrammarRegex } from "./regex-rewrite.js";
import type { StructuredConstraint } from "./types.js";
import type { XgrammarApi } from "./xgrammar.js";

/** What xgrammar is given for a constraint: one of the three inputs it compiles. */
export type GrammarSource =
  /** `substitutions`: placeholders in the converted schema's EBNF, and what replaces them. */
  { type: "json_schema"; schema: string; anyWhitespace: boolean; substitutions: Record<string, string> } | { type: "ebnf"; grammar: string } | { type: "structural_tag"; tag: string };

export interface PreparedConstraint {
  source: GrammarSource;
  /** Equal keys mean equal compiled grammars (for one tokenizer). */
  key: string;
  /** The request error for a failure xgrammar reported while reading the source, in vLLM's words. */
  describeFailure(reason: string | undefined): string;
  /** The source as the client wrote it, when `source` rewrote it: xgrammar's reasons point into this one. */
  original?: GrammarSource;
}

/**
 * Turns a constraint into xgrammar's input, refusing what can be refused without xgrammar (vLLM's
 * messages, `docs/api/chat.md#structured-outputs`). Throws `StructuredOutputError`.
 */
export function prepareConstraint(constraint: StructuredConstraint): PreparedConstraint {
  switch (constraint.kind) {
    case "json_schema":
    case "json_object":
      return prepareJson(constraint);
    case "regex": {
      // xgrammar's regex reader cannot take a NUL; vLLM refuses it before it gets there.
      if (constraint.pattern.includes("\0")) throw new StructuredOutputError("structured_outputs.regex must not contain a NUL character ('\\x00')");
      const describeFailure = (reason: string | undefined) => `Failed to transform regex into a grammar: ${reason ?? "invalid regex"}`;
      // The WASM API compiles regexes only inside structural tags (the same regex converter).
      const regexSource = (pattern: string): GrammarSource => ({ type: "structural_tag", tag: JSON.stringify({ type: "structural_tag", format: { type: "regex", pattern } }) });
      const source = regexSource(rewritten(constraint.pattern, describeFailure));
      return { ...prepared(source, describeFailure), original: regexSource(constraint.pattern) };
    }
    case "choice": {
      if (constraint.choices.length === 0) throw new StructuredOutputError("Choice '[]' cannot be an empty list");
      const bad = constraint.choices.findIndex(hasLoneSurrogate);
      if (bad >= 0) throw new StructuredOutputError(`Failed to transform choices into a grammar: choice ${bad} contains an unpaired UTF-16 surrogate`);
      return prepared({ type: "ebnf", grammar: choiceGrammar(constraint.choices) }, (reason) => `Failed to transform choices into a grammar: ${reason ?? "invalid choice"}`);
    }
    case "grammar":
      return prepareGrammar(constraint.grammar);
    case "structural_tag":
      return prepared({ type: "structural_tag", tag: normalizeStructuralTag(constraint.spec) }, (reason) => withReason("Invalid structural tag specification.", reason));
  }
}

function prepareJson(constraint: Extract<StructuredConstraint, { kind: "json_schema" | "json_object" }>): PreparedConstraint {
  const options = constraint.options ?? {};
  if (options.whitespacePattern) {
    throw new StructuredOutputError("whitespace_pattern is not supported by the xgrammar structured-outputs backend; use disable_any_whitespace to allow no whitespace at all");
  }
  let schema: unknown = constraint.kind === "json_object" ? { type: "object" } : constraint.schema;
  if (options.disableAdditionalProperties) schema = withoutAdditionalProperties(schema);
  const ready = readySchema(schema);
  const source: GrammarSource = { type: "json_schema", schema: JSON.stringify(ready.schema), anyWhitespace: !options.disableAnyWhitespace, substitutions: ready.substitutions };
  return prepared(source, (reason) => `Failed to transform json schema into a grammar: ${reason ?? "invalid schema"}`);
}

/** The schema as xgrammar enforces it exactly, or the request error saying what it cannot enforce. */
function readySchema(schema: unknown, unsupportedPrefix = "The provided JSON schema contains features not supported by xgrammar."): ReadySchema {
  const unsupported = unsupportedJsonSchemaFeature(schema);
  if (unsupported) throw new StructuredOutputError(`${unsupportedPrefix} Unsupported: ${unsupported}.`);
  try {
    return xgrammarReadySchema(schema);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new StructuredOutputError(`${unsupportedPrefix} Unsupported: ${error.message}.`);
  }
}

function prepareGrammar(grammar: string): PreparedConstraint {
  if (grammar.trim() === "") throw new StructuredOutputError("structured_outputs.grammar cannot be an empty string");
  let ebnf = grammar;
  if (looksLikeLark(grammar)) {
    try {
      ebnf = larkToEbnf(grammar);
    } catch (error) {
      if (!(error instanceof LarkConversionError)) throw error;
      throw new StructuredOutputError(`Invalid grammar specification. No line has '::=', so the grammar was read as Lark: ${error.message}`);
    }
  }
  const nonAscii = nonAsciiCharClass(ebnf);
  if (nonAscii) throw new StructuredOutputError(`Invalid grammar specification. ${nonAsciiClassReason(nonAscii)}`);
  return prepared({ type: "ebnf", grammar: ebnf }, (reason) => withReason("Invalid grammar specification.", reason));
}

function nonAsciiClassReason(charClass: string): string {
  return `The character class ${charClass} has non-ASCII members, which the xgrammar build in use matches wrongly; write them as string literals ("é" | "è") instead.`;
}

function rewritten(pattern: string, describeFailure: (reason: string) => string): string {
  try {
    return xgrammarRegex(pattern);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new StructuredOutputError(describeFailure(error.message));
  }
}

/**
 * A structural tag as xgrammar reads it: the current `{"type":"structural_tag","format":...}`, or
 * vLLM's legacy `{"structures":[{begin,schema,end}],"triggers":[...]}` rewritten into the
 * `triggered_tags` format that xgrammar itself uses for it.
 */
function normalizeStructuralTag(spec: string): string {
  const invalid = (reason: string) => new StructuredOutputError(`Invalid structural tag specification. ${reason}`);
  let value: unknown;
  try {
    value = JSON.parse(spec);
  } catch (error) {
    throw invalid(`It is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid("It must be a JSON object.");
  const tag = value as Record<string, unknown>;
  let normalized: Record<string, unknown>;
  if ("structures" in tag) {
    const { structures, triggers } = tag;
    if (!Array.isArray(structures) || !Array.isArray(triggers) || !triggers.every((trigger) => typeof trigger === "string")) {
      throw invalid("`structures` and `triggers` must be arrays (triggers of strings).");
    }
    const tags = structures.map((structure: unknown, index) => {
      const { begin, schema, end } = (structure ?? {}) as Record<string, unknown>;
      const schemaOk = typeof schema === "boolean" || (typeof schema === "object" && schema !== null && !Array.isArray(schema));
      if (typeof begin !== "string" || typeof end !== "string" || !schemaOk) throw invalid(`structures[${index}] needs string \`begin\` and \`end\` and an object \`schema\`.`);
      return { type: "tag", begin, content: { type: "json_schema", json_schema: schema }, end };
    });
    normalized = { type: "structural_tag", format: { type: "triggered_tags", triggers, tags } };
  } else if ("format" in tag) {
    normalized = { type: "structural_tag", format: tag.format };
  } else {
    throw invalid("It needs a `format` (or the legacy `structures` and `triggers`).");
  }
  readyFormats(normalized);
  return JSON.stringify(normalized);
}

/**
 * Schemas, regexes and grammars inside a structural tag go through the same converters as on their
 * own, so they get the same treatment (in place).
 */
function readyFormats(node: unknown): void {
  if (typeof node !== "object" || node === null) return;
  const record = node as Record<string, unknown>;
  const invalid = (reason: string) => `Invalid structural tag specification. ${reason}`;
  if ((record.type === "json_schema" || record.type === "qwen_xml_parameter") && "json_schema" in record) {
    const prefix = invalid("A JSON schema in it contains features not supported by xgrammar.");
    const ready = readySchema(record.json_schema, prefix);
    // xgrammar converts these schemas itself, so there is no EBNF to patch.
    if (Object.keys(ready.substitutions).length > 0) throw new StructuredOutputError(`${prefix} Unsupported: integer bounds inside a structural tag.`);
    record.json_schema = ready.schema;
    return;
  }
  if (record.type === "regex" && typeof record.pattern === "string") {
    record.pattern = rewritten(record.pattern, (reason) => invalid(`A regex in it: ${reason}`));
    return;
  }
  if (record.type === "grammar" && typeof record.grammar === "string") {
    const nonAscii = nonAsciiCharClass(record.grammar);
    if (nonAscii) throw new StructuredOutputError(invalid(nonAsciiClassReason(nonAscii)));
    return;
  }
  for (const child of Object.values(record)) readyFormats(child);
}

function prepared(source: GrammarSource, describeFailure: (reason: string | undefined) => string): PreparedConstraint {
  return { source, key: sourceKey(source), describeFailure };
}

function sourceKey(source: GrammarSource): string {
  switch (source.type) {
    case "json_schema":
      // The placeholders carry a random nonce; keyed by what replaces them instead.
      return `json:${source.anyWhitespace ? "ws" : "nows"}:${Object.entries(source.substitutions).reduce((text, [placeholder, ebnf]) => text.replaceAll(placeholder, ebnf), source.schema)}`;
    case "ebnf":
      return `ebnf:${source.grammar}`;
    case "structural_tag":
      return `tag:${source.tag}`;
  }
}

function withReason(message: string, reason: string | undefined): string {
  return reason ? `${message} ${reason}` : message;
}

// Python's xgrammar and vLLM leave the JSON indent unset; the JS wrapper spells "unset" as -1.
const NO_INDENT = -1;

/** Parses a source into an (uncompiled) grammar: the check that needs no tokenizer. */
export async function parseSource(api: XgrammarApi, source: GrammarSource): Promise<Grammar> {
  switch (source.type) {
    case "json_schema":
      if (Object.keys(source.substitutions).length === 0) return api.Grammar.fromJSONSchema(source.schema, source.anyWhitespace, NO_INDENT);
      return api.Grammar.fromEBNF(await substitutedSchemaEbnf(api, source));
    case "ebnf":
      return api.Grammar.fromEBNF(source.grammar);
    case "structural_tag":
      return api.Grammar.fromStructuralTag(source.tag);
  }
}

/** Compiles a source against the compiler's tokenizer (the token-mask tables; the slow part). */
export async function compileSource(api: XgrammarApi, compiler: GrammarCompiler, source: GrammarSource): Promise<CompiledGrammar> {
  if (source.type === "structural_tag") return compiler.compileStructuralTag(source.tag);
  if (source.type === "json_schema" && Object.keys(source.substitutions).length === 0) {
    return compiler.compileJSONSchema(source.schema, source.anyWhitespace, NO_INDENT);
  }
  // Parsed here rather than by compileGrammar(string), which never frees the Grammar it makes.
  const grammar = await parseSource(api, source);
  try {
    return await compiler.compileGrammar(grammar);
  } finally {
    grammar.dispose();
  }
}

/** The schema converted to EBNF by xgrammar, with each placeholder's `const` literal replaced. */
async function substitutedSchemaEbnf(api: XgrammarApi, source: Extract<GrammarSource, { type: "json_schema" }>): Promise<string> {
  let ebnf = await api.Testings._jsonSchemaToEBNF(source.schema, source.anyWhitespace, NO_INDENT);
  for (const [placeholder, replacement] of Object.entries(source.substitutions)) {
    // xgrammar writes a const string as the EBNF literal of its JSON text: "\"placeholder\"".
    const literal = `"\\"${placeholder}\\""`;
    if (!ebnf.includes(literal)) throw new Error(`the converted schema lost placeholder ${placeholder}`);
    ebnf = ebnf.replaceAll(literal, `(${replacement})`);
  }
  return ebnf;
}
