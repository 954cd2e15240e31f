import type { JsonGrammarOptions, StructuredConstraint } from "../../../engine/structured/types.js";
import { pythonRepr } from "../../../python-format.js";
import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionRequest, ResponseFormatIn, StructuredOutputsIn } from "../completions/protocol.js";
import { namedToolSchema, requiredToolsSchema, type ToolChoice } from "./tool-choice.js";

/**
 * The request's structured-output constraint (`docs/api/chat.md#structured-outputs`): `structured_outputs`,
 * with `response_format` written into it (docs/api/chat.md#response-format), overridden by a forced tool
 * choice (docs/api/chat.md#tool-choice). Returns null for free decoding. Whether the constraint compiles is
 * the engine's check (`InferenceEngine.checkConstraint`), run before any header is sent.
 */
export function buildConstraint(req: ChatCompletionRequest, toolChoice: ToolChoice): StructuredConstraint | null {
  if (toolChoice.kind === "named") return { kind: "json_schema", schema: namedToolSchema(req.tools ?? [], toolChoice.name) };
  if (toolChoice.kind === "required") return { kind: "json_schema", schema: requiredToolsSchema(req.tools ?? []) };
  const outputs = withResponseFormat(req.structured_outputs ?? null, req.response_format ?? null);
  return outputs ? toConstraint(outputs) : null;
}

type Outputs = Partial<StructuredOutputsIn>;

const KINDS = ["json", "regex", "choice", "grammar", "json_object", "structural_tag"] as const;

function withResponseFormat(outputs: StructuredOutputsIn | null, format: ResponseFormatIn | null): Outputs | null {
  if (!format || format.type === "text") return outputs;
  const merged: Outputs = { ...outputs };
  if (format.type === "json_object") merged.json_object = true;
  else if (format.type === "json_schema") merged.json = format.json_schema?.schema ?? null;
  else merged.structural_tag = JSON.stringify(format);
  return merged;
}

function describe(outputs: Outputs): string {
  const fields = KINDS.map((kind) => `${kind}=${pythonRepr(outputs[kind] ?? null)}`);
  return `StructuredOutputsParams(${fields.join(", ")})`;
}

function toConstraint(outputs: Outputs): StructuredConstraint {
  const kinds = KINDS.filter((kind) => outputs[kind] !== null && outputs[kind] !== undefined);
  if (kinds.length === 0) throw chatRuleError(`You must use one kind of structured outputs constraint but none are specified: ${describe(outputs)}`);
  if (kinds.length > 1) throw chatRuleError(`You can only use one kind of structured outputs constraint but multiple are specified: ${describe(outputs)}`);
  if (outputs._backend && outputs._backend !== "xgrammar") {
    throw chatRuleError(
      `Request-level structured output backend selection is not supported. The request specified '${outputs._backend}', but this server uses 'xgrammar'. This error can be resolved by removing '_backend' from the request.`,
    );
  }
  const options = jsonOptions(outputs);
  switch (kinds[0]!) {
    case "json":
      return { kind: "json_schema", schema: jsonSchemaOf(outputs.json!), ...options };
    case "json_object":
      if (outputs.json_object !== true) throw chatRuleError("structured_outputs.json_object must be True if set; omit structured_outputs to disable structured outputs");
      return { kind: "json_object", ...options };
    case "regex":
      return { kind: "regex", pattern: outputs.regex! };
    case "choice":
      if (outputs.choice!.length === 0) throw chatRuleError(`Choice '[]' cannot be an empty list`);
      return { kind: "choice", choices: outputs.choice! };
    case "grammar":
      if (outputs.grammar!.trim() === "") throw chatRuleError("structured_outputs.grammar cannot be an empty string");
      return { kind: "grammar", grammar: outputs.grammar! };
    case "structural_tag":
      return { kind: "structural_tag", spec: outputs.structural_tag! };
  }
}

function jsonOptions(outputs: Outputs): { options?: JsonGrammarOptions } {
  const options: JsonGrammarOptions = {};
  if (outputs.disable_any_whitespace) options.disableAnyWhitespace = true;
  if (outputs.disable_additional_properties) options.disableAdditionalProperties = true;
  if (outputs.whitespace_pattern) options.whitespacePattern = outputs.whitespace_pattern;
  return Object.keys(options).length > 0 ? { options } : {};
}

/** A schema given as a JSON string is parsed here; a string that is not JSON fails the way vLLM's grammar compiler does. */
function jsonSchemaOf(json: string | boolean | Record<string, unknown>): Record<string, unknown> | boolean {
  if (typeof json !== "string") return json;
  if (json.trim() === "") throw chatRuleError("structured_outputs.json cannot be an empty string");
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw chatRuleError(`Failed to transform json schema into a grammar: ${(error as Error).message}`);
  }
  if (typeof parsed === "boolean" || (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))) return parsed as Record<string, unknown> | boolean;
  throw chatRuleError("Failed to transform json schema into a grammar: a JSON schema must be an object or a boolean");
}
