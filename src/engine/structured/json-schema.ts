import { integerRangeEbnf } from "./integer-range.js";
import { jsonStringRegex } from "./regex-rewrite.js";

/*
 * JSON schemas, fitted to xgrammar's converter. It compiles many schemas it does not enforce: it
 * ignores some keywords, reads others wrongly (one-sided integer bounds, decimal bounds) and puts
 * string patterns and length-limited strings into the JSON text without escaping. Where a schema
 * can be rewritten into one xgrammar does enforce, with the same meaning, it is; where not, it is
 * refused, as vLLM refuses some ("The provided JSON schema contains features not supported by
 * xgrammar."), naming the keyword. Every output then satisfies the schema the client sent.
 */

type Schema = Record<string, unknown>;

/** Keywords the converter never turns into grammar. */
const IGNORED_KEYWORDS = ["not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies", "multipleOf", "uniqueItems", "contains", "minContains", "maxContains"];

/** String formats the converter has a grammar for; any other format would be ignored. */
const SUPPORTED_FORMATS = new Set(["email", "date", "time", "date-time", "duration", "ipv4", "ipv6", "hostname", "uuid", "uri", "uri-reference", "uri-template", "json-pointer", "relative-json-pointer"]);

/**
 * The converter looks at the first of these a schema has and ignores every other keyword next to
 * it, so a schema with one of them may only carry annotations besides.
 */
const DISPATCH_KEYWORDS = ["$ref", "const", "enum", "anyOf", "oneOf", "allOf"];
const ANNOTATIONS = new Set(["$defs", "definitions", "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "discriminator"]);

/** Keywords that constrain one type only; without a `type` the converter allows any value and drops them. */
const TYPED_KEYWORDS = ["minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "required", "minProperties", "maxProperties"];
const NUMBER_BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

const SUBSCHEMA = ["items", "additionalItems", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "not", "if", "then", "else", "contains"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/** The first feature of `schema` that xgrammar would not enforce, described with where it is; else undefined. */
export function unsupportedJsonSchemaFeature(schema: unknown): string | undefined {
  let found: string | undefined;
  visitSchemas(schema, "#", false, (node, path, isPropertyName) => {
    found ??= unsupportedHere(node, path, isPropertyName);
    if (!found && Array.isArray(node.oneOf) && node.oneOf.length > 1 && !disjointBranches(node.oneOf, schema)) {
      found = `\`oneOf\` whose branches may overlap (xgrammar enforces it as \`anyOf\`) at ${path}`;
    }
  });
  return found;
}

/**
 * Whether no value can match two of the branches, so that `anyOf` (what xgrammar enforces) means
 * `oneOf`: the branches have disjoint types, or are distinct constants, or are objects told apart
 * by a required property with a distinct constant in each (a discriminator, as pydantic writes).
 */
function disjointBranches(branches: unknown[], root: unknown): boolean {
  const resolved = branches.map((branch) => resolveRef(branch, root));
  if (resolved.some((branch) => !isObject(branch))) return false;
  const schemas = resolved as Schema[];
  const typeSets = schemas.map((branch) => (branch.const !== undefined ? [jsonTypeOf(branch.const)] : typesOf(branch).map((type) => (type === "integer" ? "number" : type))));
  if (typeSets.every((types) => types.length > 0)) {
    const seen = new Set<unknown>();
    if (typeSets.every((types) => types.every((type) => !seen.has(type) && seen.add(type)))) return true;
  }
  const constants = schemas.map((branch) => (branch.const !== undefined ? [branch.const] : Array.isArray(branch.enum) ? branch.enum : undefined));
  if (constants.every((values) => values !== undefined) && allDistinct(constants.flat())) return true;
  const first = schemas[0]!;
  const candidates = Array.isArray(first.required) ? first.required : [];
  return candidates.some((name) =>
    allDistinct(
      schemas.map((branch) => {
        const property = isObject(branch.properties) ? resolveRef(branch.properties[name as string], root) : undefined;
        const required = Array.isArray(branch.required) && branch.required.includes(name);
        return required && isObject(property) && property.const !== undefined ? property.const : Symbol("no constant");
      }),
    ),
  );
}

function resolveRef(schema: unknown, root: unknown): unknown {
  let current = schema;
  for (let depth = 0; depth < 16 && isObject(current) && typeof current.$ref === "string" && current.$ref.startsWith("#/"); depth++) {
    let target: unknown = root;
    for (const part of current.$ref.slice(2).split("/")) target = isObject(target) ? target[part] : undefined;
    current = target;
  }
  return current;
}

function allDistinct(values: unknown[]): boolean {
  const keys = values.map((value) => (typeof value === "symbol" ? value : JSON.stringify(value)));
  return new Set(keys).size === keys.length;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" ? "number" : typeof value === "object" ? "object" : typeof value;
}

function unsupportedHere(node: Schema, path: string, isPropertyName: boolean): string | undefined {
  const keyword = IGNORED_KEYWORDS.find((name) => name in node);
  if (keyword) return `\`${keyword}\` at ${path}`;
  if (typeof node.format === "string" && !SUPPORTED_FORMATS.has(node.format)) return `format "${node.format}" at ${path}`;
  if (("pattern" in node || "format" in node) && ("minLength" in node || "maxLength" in node)) {
    return `\`pattern\`/\`format\` together with \`minLength\`/\`maxLength\` at ${path}`;
  }
  if (Array.isArray(node.allOf) && node.allOf.length > 1) return `\`allOf\` with more than one schema at ${path}`;
  if (typeof node.$ref === "string" && node.$ref !== "#" && !node.$ref.startsWith("#/")) return `a non-local \`$ref\` (${node.$ref}) at ${path}`;
  const dispatch = DISPATCH_KEYWORDS.find((name) => name in node);
  if (dispatch) {
    const ignored = Object.keys(node).find((key) => key !== dispatch && !ANNOTATIONS.has(key) && !(key === "type" && valuesHaveType(node, dispatch)));
    if (ignored) return `\`${ignored}\` next to \`${dispatch}\` at ${path}`;
    return undefined;
  }
  const types = typesOf(node);
  const impliedType = "properties" in node || "additionalProperties" in node || "unevaluatedProperties" in node || "items" in node || "prefixItems" in node || "unevaluatedItems" in node;
  if (types.length === 0 && !impliedType && !isPropertyName) {
    const typed = TYPED_KEYWORDS.find((name) => name in node);
    if (typed) return `\`${typed}\` without a \`type\` at ${path}`;
  }
  if (types.includes("number")) {
    const bound = NUMBER_BOUNDS.find((name) => name in node);
    if (bound) return `\`${bound}\` on a \`number\` (bounds are supported on \`integer\`) at ${path}`;
  }
  if ("propertyNames" in node && ("properties" in node || "patternProperties" in node || isObject(node.additionalProperties) || (node.unevaluatedProperties ?? true) !== true)) {
    return `\`propertyNames\` together with other property keywords at ${path}`;
  }
  if (isObject(node.patternProperties) && ("properties" in node || Object.keys(node.patternProperties).length > 1)) {
    return `\`patternProperties\` with more than one pattern, or next to \`properties\`, at ${path}`;
  }
  return undefined;
}

export interface ReadySchema {
  schema: unknown;
  /**
   * Placeholders in `schema` (each a `const` string) and the EBNF to put in their place once
   * xgrammar has converted the schema: the parts xgrammar's converter gets wrong are built here.
   */
  substitutions: Record<string, string>;
}

/**
 * Rewrites a supported schema (see `unsupportedJsonSchemaFeature`) into the form xgrammar enforces
 * correctly, with the same meaning: bounded integers become placeholders for EBNF built here,
 * string lengths become a pattern, and patterns match the JSON spelling of their values. Works on
 * a copy; throws RangeError for a pattern class that matches nothing or bounds that admit nothing.
 */
export function xgrammarReadySchema(schema: unknown): ReadySchema {
  const copy = structuredClone(schema);
  const substitutions: Record<string, string> = {};
  const nonce = Math.random().toString(36).slice(2, 10);
  visitSchemas(copy, "#", false, (node, _path, isPropertyName) => {
    const types = typesOf(node);
    if (types.includes("integer") && !types.includes("number") && NUMBER_BOUNDS.some((name) => name in node)) {
      const placeholder = `flywheel_integer_range_${Object.keys(substitutions).length}_${nonce}`;
      substitutions[placeholder] = integerRangeEbnf(...integerBounds(node));
      replaceInteger(node, placeholder);
      return;
    }
    const isString = types.includes("string") || isPropertyName;
    if (isString && !("pattern" in node) && !("format" in node) && ("minLength" in node || "maxLength" in node)) {
      const min = typeof node.minLength === "number" ? Math.max(0, Math.ceil(node.minLength)) : 0;
      const max = typeof node.maxLength === "number" ? String(Math.floor(node.maxLength)) : "";
      node.pattern = `^[\\s\\S]{${min},${max}}$`;
      delete node.minLength;
      delete node.maxLength;
    }
    if (typeof node.pattern === "string") node.pattern = jsonStringRegex(node.pattern);
  });
  return { schema: copy, substitutions };
}

/** Inclusive integer bounds from minimum/maximum and both spellings of exclusive bounds. */
function integerBounds(node: Schema): [bigint | undefined, bigint | undefined] {
  const finite = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
  const minimum = finite(node.minimum);
  const maximum = finite(node.maximum);
  let low = minimum === undefined ? undefined : Math.ceil(minimum);
  let high = maximum === undefined ? undefined : Math.floor(maximum);
  // Draft 4 spells exclusive bounds as booleans next to minimum/maximum; later drafts as numbers.
  if (node.exclusiveMinimum === true && minimum !== undefined) low = Math.floor(minimum) + 1;
  if (node.exclusiveMaximum === true && maximum !== undefined) high = Math.ceil(maximum) - 1;
  const exclusiveLow = finite(node.exclusiveMinimum);
  const exclusiveHigh = finite(node.exclusiveMaximum);
  if (exclusiveLow !== undefined) low = Math.max(low ?? -Infinity, Math.floor(exclusiveLow) + 1);
  if (exclusiveHigh !== undefined) high = Math.min(high ?? Infinity, Math.ceil(exclusiveHigh) - 1);
  const big = (value: number | undefined) => (value === undefined ? undefined : BigInt(value));
  return [big(low), big(high)];
}

/** A bounded integer schema becomes its placeholder (a type list keeps its other types beside it). */
function replaceInteger(node: Schema, placeholder: string): void {
  const others = typesOf(node).filter((type) => type !== "integer");
  const rest: Schema = {};
  for (const [key, value] of Object.entries(node)) if (key !== "type" && !NUMBER_BOUNDS.includes(key) && !ANNOTATIONS.has(key)) rest[key] = value;
  for (const key of Object.keys(node)) if (!ANNOTATIONS.has(key)) delete node[key];
  if (others.length === 0) node.const = placeholder;
  else node.anyOf = [{ const: placeholder }, ...others.map((type) => ({ ...rest, type }))];
}

/**
 * `disable_additional_properties`: every object schema that does not say otherwise gets
 * `additionalProperties: false`. Returns a copy.
 */
export function withoutAdditionalProperties<T>(schema: T): T {
  const copy = structuredClone(schema);
  visitSchemas(copy, "#", false, (node) => {
    const isObjectSchema = typesOf(node).includes("object") || isObject(node.properties);
    if (isObjectSchema && !("additionalProperties" in node)) node.additionalProperties = false;
  });
  return copy;
}

/** Calls `visit` on every schema object in `schema`, following only the keywords that hold schemas. */
function visitSchemas(schema: unknown, path: string, isPropertyName: boolean, visit: (node: Schema, path: string, isPropertyName: boolean) => void): void {
  if (!isObject(schema)) return;
  visit(schema, path, isPropertyName);
  for (const key of SUBSCHEMA) if (isObject(schema[key])) visitSchemas(schema[key], `${path}/${key}`, key === "propertyNames", visit);
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (isObject(map)) for (const [name, sub] of Object.entries(map)) visitSchemas(sub, `${path}/${key}/${name}`, false, visit);
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, index) => visitSchemas(sub, `${path}/${key}/${index}`, false, visit));
  }
}

function typesOf(node: Schema): unknown[] {
  return Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
}

/** `type` next to `const`/`enum` changes nothing when every listed value already has that type. */
function valuesHaveType(node: Schema, dispatch: string): boolean {
  const values = dispatch === "const" ? [node.const] : dispatch === "enum" && Array.isArray(node.enum) ? node.enum : undefined;
  if (!values) return false;
  const types = typesOf(node);
  return values.every((value) => types.some((type) => hasJsonType(value, type)));
}

function hasJsonType(value: unknown, type: unknown): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return false;
  }
}

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
