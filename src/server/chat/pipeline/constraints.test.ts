import { describe, expect, it } from "vitest";
import { apiErrorOf, chatRequest } from "../../../testing/chat.js";
import { buildConstraint } from "./constraints.js";
import { checkToolChoiceSupported, effectiveToolChoice, requiredToolsSchema } from "./tool-choice.js";

const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const time = { type: "function", function: { name: "get_time" } };

function constraintOf(fields: Record<string, unknown>) {
  const req = chatRequest(fields);
  return buildConstraint(req, effectiveToolChoice(req));
}

describe("tool_choice", () => {
  it("defaults like vLLM", () => {
    expect(effectiveToolChoice(chatRequest({}))).toEqual({ kind: "none" });
    expect(effectiveToolChoice(chatRequest({ tools: [weather] }))).toEqual({ kind: "auto" });
    expect(effectiveToolChoice(chatRequest({ tools: [weather], tool_choice: null }))).toEqual({ kind: "none" });
    expect(effectiveToolChoice(chatRequest({ tools: [weather], tool_choice: "required" }))).toEqual({ kind: "required" });
    expect(effectiveToolChoice(chatRequest({ tools: [weather], tool_choice: { type: "function", function: { name: "get_weather" } } }))).toEqual({ kind: "named", name: "get_weather" });
  });

  it("needs a Hermes-capable model for auto only", () => {
    const error = apiErrorOf(() => checkToolChoiceSupported({ kind: "auto" }, { id: "m", hermesToolCalls: false }));
    expect(error).toMatchObject({ status: 400, param: "tool_choice", message: expect.stringContaining('"auto" tool choice is not available for model `m`') });
    expect(() => checkToolChoiceSupported({ kind: "required" }, { id: "m", hermesToolCalls: false })).not.toThrow();
    expect(() => checkToolChoiceSupported({ kind: "auto" }, { id: "m", hermesToolCalls: true })).not.toThrow();
  });

  it("builds vLLM's schema for required: a non-empty array of name/parameters objects with hoisted $defs", () => {
    const withDefs = { type: "function", function: { name: "f", parameters: { type: "object", properties: { p: { $ref: "#/$defs/P" } }, $defs: { P: { type: "string" } } } } };
    const req = chatRequest({ tools: [weather, time, withDefs] });
    expect(requiredToolsSchema(req.tools!)).toEqual({
      type: "array",
      minItems: 1,
      items: {
        anyOf: [
          { type: "object", properties: { name: { type: "string", enum: ["get_weather"] }, parameters: weather.function.parameters }, required: ["name", "parameters"] },
          { type: "object", properties: { name: { type: "string", enum: ["get_time"] }, parameters: { type: "object", properties: {} } }, required: ["name", "parameters"] },
          { type: "object", properties: { name: { type: "string", enum: ["f"] }, parameters: { type: "object", properties: { p: { $ref: "#/$defs/P" } } } }, required: ["name", "parameters"] },
        ],
      },
      $defs: { P: { type: "string" } },
    });
    const clash = { type: "function", function: { name: "g", parameters: { type: "object", $defs: { P: { type: "integer" } } } } };
    expect(apiErrorOf(() => requiredToolsSchema(chatRequest({ tools: [withDefs, clash] }).tools!)).message).toBe("Tool definition 'P' has multiple schemas, which is not supported.");
  });
});

describe("structured-output constraints", () => {
  it("decodes freely without any constraint field, and for response_format text", () => {
    expect(constraintOf({})).toBeNull();
    expect(constraintOf({ response_format: { type: "text" } })).toBeNull();
    expect(constraintOf({ tools: [weather], tool_choice: "auto" })).toBeNull();
  });

  it("maps every structured_outputs kind with its JSON options", () => {
    expect(constraintOf({ structured_outputs: { json: { type: "object" }, disable_any_whitespace: true, whitespace_pattern: " ?" } })).toEqual({
      kind: "json_schema",
      schema: { type: "object" },
      options: { disableAnyWhitespace: true, whitespacePattern: " ?" },
    });
    expect(constraintOf({ structured_outputs: { json: '{"type": "integer"}' } })).toEqual({ kind: "json_schema", schema: { type: "integer" } });
    expect(constraintOf({ structured_outputs: { json_object: true, disable_additional_properties: true } })).toEqual({ kind: "json_object", options: { disableAdditionalProperties: true } });
    expect(constraintOf({ structured_outputs: { regex: "[a-z]+" } })).toEqual({ kind: "regex", pattern: "[a-z]+" });
    expect(constraintOf({ structured_outputs: { choice: ["yes", 'say "no"'] } })).toEqual({ kind: "choice", choices: ["yes", 'say "no"'] });
    expect(constraintOf({ structured_outputs: { grammar: 'root ::= "a"' } })).toEqual({ kind: "grammar", grammar: 'root ::= "a"' });
    expect(constraintOf({ structured_outputs: { structural_tag: "{}" } })).toEqual({ kind: "structural_tag", spec: "{}" });
  });

  it("maps response_format as docs/api/chat.md#response-format says", () => {
    expect(constraintOf({ response_format: { type: "json_object" } })).toEqual({ kind: "json_object" });
    expect(constraintOf({ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "array" }, strict: true } } })).toEqual({ kind: "json_schema", schema: { type: "array" } });
    const tag = { type: "structural_tag", structures: [{ begin: "<a>", schema: {}, end: "</a>" }], triggers: ["<a"] };
    expect(constraintOf({ response_format: tag })).toEqual({ kind: "structural_tag", spec: JSON.stringify(tag) });
    // Written into structured_outputs: options apply, and two kinds collide.
    expect(constraintOf({ response_format: { type: "json_object" }, structured_outputs: { disable_any_whitespace: true } })).toEqual({ kind: "json_object", options: { disableAnyWhitespace: true } });
    expect(apiErrorOf(() => constraintOf({ response_format: { type: "json_object" }, structured_outputs: { regex: "a" } })).message).toMatch(
      /^You can only use one kind of structured outputs constraint but multiple are specified: StructuredOutputsParams\(json=None, regex='a', choice=None, grammar=None, json_object=True, structural_tag=None\)$/,
    );
  });

  it("lets forced tool choices override structured outputs", () => {
    expect(constraintOf({ tools: [weather], tool_choice: { type: "function", function: { name: "get_weather" } }, response_format: { type: "json_object" } })).toEqual({
      kind: "json_schema",
      schema: weather.function.parameters,
    });
    expect(constraintOf({ tools: [time], tool_choice: { type: "function", function: { name: "get_time" } } })).toEqual({ kind: "json_schema", schema: { type: "object", properties: {} } });
    const required = constraintOf({ tools: [weather], tool_choice: "required", structured_outputs: { grammar: "x" } });
    expect(required).toMatchObject({ kind: "json_schema", schema: { type: "array", minItems: 1 } });
  });

  it("refuses empty and contradictory constraints with vLLM's texts", () => {
    expect(apiErrorOf(() => constraintOf({ structured_outputs: {} })).message).toMatch(/^You must use one kind of structured outputs constraint but none are specified: /);
    expect(apiErrorOf(() => constraintOf({ response_format: { type: "json_schema", json_schema: { name: "x" } } })).message).toMatch(/none are specified/);
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { choice: [] } })).message).toBe("Choice '[]' cannot be an empty list");
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { grammar: "  " } })).message).toBe("structured_outputs.grammar cannot be an empty string");
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { json: "" } })).message).toBe("structured_outputs.json cannot be an empty string");
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { json: "{not json" } })).message).toMatch(/^Failed to transform json schema into a grammar: /);
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { json_object: false } })).message).toBe("structured_outputs.json_object must be True if set; omit structured_outputs to disable structured outputs");
    expect(apiErrorOf(() => constraintOf({ structured_outputs: { regex: "a", _backend: "guidance" } })).message).toMatch(/^Request-level structured output backend selection is not supported/);
    expect(constraintOf({ structured_outputs: { regex: "a", _backend: "xgrammar" } })).toEqual({ kind: "regex", pattern: "a" });
  });
});
