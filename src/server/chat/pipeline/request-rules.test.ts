import { describe, expect, it } from "vitest";
import { apiErrorOf, chatRequest } from "../../../testing/chat.js";
import { checkRequestRules } from "./request-rules.js";

const tool = { type: "function", function: { name: "get_weather", parameters: { type: "object" } } };

function ruleError(fields: Record<string, unknown>, logprobs = Boolean(fields.logprobs)) {
  return apiErrorOf(() => checkRequestRules(chatRequest(fields), { logprobs }));
}

function passes(fields: Record<string, unknown>, logprobs = Boolean(fields.logprobs)) {
  expect(() => checkRequestRules(chatRequest(fields), { logprobs })).not.toThrow();
}

describe("request-level chat rules (400, vLLM texts)", () => {
  it("validates cache_salt", () => {
    expect(ruleError({ cache_salt: "" })).toEqual({ status: 400, type: "BadRequestError", param: "cache_salt", message: "Parameter 'cache_salt' must be a non-empty string if provided." });
    const tooLong = "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\', or NUL.";
    expect(ruleError({ cache_salt: "x".repeat(129) }).message).toBe(tooLong);
    for (const salt of ["a@b", "a/b", "a\\b", "a\0b"]) expect(ruleError({ cache_salt: salt }).message).toBe(tooLong);
    passes({ cache_salt: "x".repeat(128) });
  });

  it("checks response_format shapes beyond the schema", () => {
    expect(ruleError({ response_format: { type: "json_schema" } })).toMatchObject({
      param: "response_format",
      message: "When response_format type is 'json_schema', the 'json_schema' field must be provided.",
    });
    expect(ruleError({ response_format: { type: "structural_tag", structures: "x" } })).toMatchObject({ param: "response_format", message: "Invalid response_format structural_tag specification." });
    passes({ response_format: { type: "structural_tag", structures: [{ begin: "<a>", schema: {}, end: "</a>" }], triggers: ["<a"] } });
    passes({ response_format: { type: "structural_tag", format: { type: "const_string", value: "x" } } });
  });

  it("allows stream_options only when streaming, treating {} as absent", () => {
    expect(ruleError({ stream_options: { include_usage: true } })).toMatchObject({ param: "stream_options", message: "Stream options can only be defined when `stream=True`." });
    expect(ruleError({ stream: false, stream_options: { include_usage: null } }).param).toBe("stream_options");
    passes({ stream_options: {} });
    passes({ stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } });
  });

  it("checks top_logprobs and prompt_logprobs", () => {
    expect(ruleError({ logprobs: true, top_logprobs: -2 })).toMatchObject({ param: "top_logprobs", message: "`top_logprobs` must be a positive value or -1. (parameter=top_logprobs, value=-2)" });
    expect(ruleError({ top_logprobs: 3 })).toMatchObject({ param: "top_logprobs", message: "when using `top_logprobs`, `logprobs` must be set to true." });
    expect(ruleError({ top_logprobs: -1 }).param).toBe("top_logprobs");
    passes({ top_logprobs: 0 });
    passes({ top_logprobs: 3 }, true);
    expect(ruleError({ stream: true, prompt_logprobs: 1 })).toMatchObject({ param: "prompt_logprobs", message: "`prompt_logprobs` are not available when `stream=True`." });
    expect(ruleError({ prompt_logprobs: -5 }).message).toContain("`prompt_logprobs` must be a positive value or -1.");
    passes({ stream: true, prompt_logprobs: 0 });
  });

  it("allows one structured-output kind and no named tool next to it", () => {
    expect(ruleError({ structured_outputs: { json: {}, regex: "a" } }).message).toBe("You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').");
    expect(ruleError({ structured_outputs: { choice: ["a"] }, tools: [tool], tool_choice: { type: "function", function: { name: "get_weather" } } }).message).toBe(
      "You can only either use constraints for structured outputs or tools, not both.",
    );
    passes({ structured_outputs: { choice: ["a"] }, tools: [tool], tool_choice: "required" });
  });

  it("validates tools against tool_choice", () => {
    expect(ruleError({ tools: [] })).toMatchObject({ param: "tools", message: "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely." });
    expect(ruleError({ tool_choice: "auto" })).toMatchObject({ param: "tool_choice", message: "When using `tool_choice`, `tools` must be set." });
    expect(ruleError({ tools: [tool], tool_choice: { type: "function", function: { name: "other" } } })).toMatchObject({
      param: "tool_choice",
      message: "The tool specified in `tool_choice` does not match any of the specified `tools`",
    });
    passes({ tool_choice: "none" });
    passes({ tools: [tool] });
    passes({ tools: [tool], tool_choice: { type: "function", function: { name: "get_weather" } } });
  });

  it("refuses continue_final_message together with add_generation_prompt", () => {
    expect(ruleError({ continue_final_message: true })).toMatchObject({ param: null, message: "Cannot set both `continue_final_message` and `add_generation_prompt` to True." });
    passes({ continue_final_message: true, add_generation_prompt: false });
  });

  it("refuses chat_template_kwargs that the renderer binds itself", () => {
    expect(ruleError({ chat_template_kwargs: { tokenize: true, enable_thinking: false } }).message).toBe("Found unexpected chat template kwargs from request: {'tokenize'}");
    expect(ruleError({ chat_template_kwargs: { chat_template: "x", messages: [] } }).message).toBe("Found unexpected chat template kwargs from request: {'chat_template', 'messages'}");
    passes({ chat_template_kwargs: { enable_thinking: false, custom: [1] } });
  });

  it("validates repetition_detection", () => {
    expect(ruleError({ repetition_detection: { max_pattern_size: 2, min_pattern_size: 3, min_count: 2 } }).message).toContain("with min_pattern_size <= max_pattern_size");
    expect(ruleError({ repetition_detection: { max_pattern_size: -1 } }).message).toMatch(/^max_pattern_size, min_pattern_size must be >=0/);
    expect(ruleError({ repetition_detection: { max_pattern_size: 4, min_count: 1 } }).message).toMatch(/^min_count must be >= 2 to detect repetitive patterns/);
    passes({ repetition_detection: { max_pattern_size: 0 } });
    passes({ repetition_detection: { max_pattern_size: 4, min_pattern_size: 2, min_count: 3 } });
  });

  it("refuses media parts on a text-only server and parts without text", () => {
    const image = { role: "user", content: [{ type: "image_url", image_url: { url: "http://x/y.png" } }] };
    expect(ruleError({ messages: [image] })).toMatchObject({ param: "messages", message: expect.stringContaining("'image_url' is not supported") });
    expect(ruleError({ messages: [{ role: "user", content: [{ input_audio: { data: "" } }] }] }).message).toContain("'input_audio'");
    expect(ruleError({ messages: [{ role: "user", content: [{ type: "text" }] }] }).message).toContain("needs a 'text' string");
    passes({ messages: [{ role: "assistant", content: [{ type: "refusal", refusal: "no" }, "plain", { text: "untyped" }] }] });
  });
});
