import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionRequest, ToolDefinitionIn } from "../completions/protocol.js";

/**
 * `tool_choice` after vLLM's defaulting (`docs/api/chat.md#tool-choice`): absent with tools → `auto`;
 * null or absent without tools → `none`. `auto` parses Hermes `<tool_call>` blocks out of free
 * text; `required` and a named function constrain decoding with a JSON schema instead.
 */
export type ToolChoice = { kind: "none" } | { kind: "auto" } | { kind: "required" } | { kind: "named"; name: string };

export function effectiveToolChoice(req: ChatCompletionRequest): ToolChoice {
  const choice = req.tool_choice;
  if (choice === undefined) return req.tools && req.tools.length > 0 ? { kind: "auto" } : { kind: "none" };
  if (choice === null || choice === "none") return { kind: "none" };
  if (choice === "auto") return { kind: "auto" };
  if (choice === "required") return { kind: "required" };
  return { kind: "named", name: choice.function.name };
}

/** `auto` needs a model that writes Hermes-style calls: `<tool_call>` and `</tool_call>` are tokens of its vocabulary. */
export function checkToolChoiceSupported(choice: ToolChoice, model: { id: string; hermesToolCalls: boolean }): void {
  if (choice.kind === "auto" && !model.hermesToolCalls) {
    throw chatRuleError(
      `"auto" tool choice is not available for model \`${model.id}\`: its tokenizer has no <tool_call> and </tool_call> tokens for the Hermes tool parser. Use tool_choice "required" or a named function, or "none".`,
      { param: "tool_choice" },
    );
  }
}

const EMPTY_PARAMETERS = { type: "object", properties: {} };

function parametersOf(tool: ToolDefinitionIn): Record<string, unknown> {
  return tool.function.parameters ?? EMPTY_PARAMETERS;
}

/** A named choice: the whole output is that function's arguments object. */
export function namedToolSchema(tools: ToolDefinitionIn[], name: string): Record<string, unknown> {
  const tool = tools.find((candidate) => candidate.function.name === name);
  if (!tool) throw chatRuleError("The tool specified in `tool_choice` does not match any of the specified `tools`", { param: "tool_choice" });
  return parametersOf(tool);
}

/**
 * `required`: a non-empty JSON array of `{"name": <one tool>, "parameters": <its schema>}`, with the
 * tools' `$defs` hoisted to the top (two tools defining one name differently cannot be combined).
 * vLLM writes `type: "object"` next to the `anyOf`; xgrammar ignores keywords beside `anyOf`, so it
 * goes into each branch here (the same set of values, in a form xgrammar enforces).
 */
export function requiredToolsSchema(tools: ToolDefinitionIn[]): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const variants = tools.map((tool) => {
    const { $defs, ...parameters } = parametersOf(tool) as Record<string, unknown> & { $defs?: Record<string, unknown> };
    for (const [name, schema] of Object.entries($defs ?? {})) {
      if (name in defs && JSON.stringify(defs[name]) !== JSON.stringify(schema)) {
        throw chatRuleError(`Tool definition '${name}' has multiple schemas, which is not supported.`, { param: "tools" });
      }
      defs[name] = schema;
    }
    return {
      type: "object",
      properties: { name: { type: "string", enum: [tool.function.name] }, parameters },
      required: ["name", "parameters"],
    };
  });
  const schema: Record<string, unknown> = { type: "array", minItems: 1, items: { anyOf: variants } };
  if (Object.keys(defs).length > 0) schema.$defs = defs;
  return schema;
}
