import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseInput, RequestValidationError } from "../../validation.js";
import { ChatCompletionReq } from "./protocol.js";

const user = [{ role: "user", content: "hi" }];

function parse(body: unknown) {
  return parseInput(ChatCompletionReq, body, "body");
}

function issues(body: unknown) {
  try {
    parse(body);
  } catch (error) {
    if (error instanceof RequestValidationError) return error.issues;
    throw error;
  }
  throw new Error("expected a validation error");
}

describe("chat completion request schema", () => {
  it("fills the interface defaults and leaves model-dependent ones unset", () => {
    const req = parse({ messages: user });
    expect(req).toMatchObject({
      include_reasoning: true,
      use_beam_search: false,
      length_penalty: 1,
      include_stop_str_in_output: false,
      ignore_eos: false,
      min_tokens: 0,
      skip_special_tokens: true,
      spaces_between_special_tokens: true,
      bad_words: [],
      echo: false,
      add_generation_prompt: true,
      continue_final_message: false,
      add_special_tokens: false,
      priority: 0,
    });
    expect(req.logprobs).toBeUndefined();
    expect(req.return_tokens_as_token_ids).toBeUndefined();
  });

  it("ignores unknown fields at the top level and inside messages", () => {
    const req = parse({ messages: [{ role: "user", content: "hi", extra: 1 }], service_tier: "auto", guided_json: {}, metadata: { a: 1 } });
    expect(req.messages[0]).toEqual({ role: "user", content: "hi" });
    expect(req).not.toHaveProperty("service_tier");
    expect(req).not.toHaveProperty("guided_json");
  });

  it("coerces like pydantic's lax mode", () => {
    const req = parse({ messages: user, logprobs: "true", stream: 0, echo: "no", n: "2", max_tokens: 5.0, temperature: "0.5", top_p: 1, seed: " 7 " });
    expect(req).toMatchObject({ logprobs: true, stream: false, echo: false, n: 2, max_tokens: 5, temperature: 0.5, top_p: 1, seed: 7 });
    expect(parse({ messages: user, temperature: "inf" }).temperature).toBe(Infinity);
    expect(Number.isNaN(parse({ messages: user, top_p: "nan" }).top_p)).toBe(true);
  });

  it("reports type failures with pydantic's type names", () => {
    expect(issues({ messages: user, n: 1.5, logprobs: "maybe", temperature: "warm", max_tokens: "ten", stream: [] })).toEqual([
      { loc: ["body", "logprobs"], msg: "Input should be a valid boolean, unable to interpret input", type: "bool_parsing" },
      { loc: ["body", "max_tokens"], msg: "Input should be a valid integer, unable to parse string as an integer", type: "int_parsing" },
      { loc: ["body", "n"], msg: "Input should be a valid integer, got a number with a fractional part", type: "int_from_float" },
      { loc: ["body", "stream"], msg: "Input should be a valid boolean", type: "bool_type" },
      { loc: ["body", "temperature"], msg: "Input should be a valid number, unable to parse string as a number", type: "float_parsing" },
    ]);
  });

  it("requires messages and each message's role, and rejects an empty list", () => {
    expect(issues({})).toEqual([{ loc: ["body", "messages"], msg: "Field required", type: "missing" }]);
    expect(issues({ messages: [] })).toEqual([{ loc: ["body", "messages"], msg: "List should have at least 1 items", type: "too_short" }]);
    expect(issues({ messages: [{ content: "x" }] })).toEqual([{ loc: ["body", "messages", 0, "role"], msg: "Field required", type: "missing" }]);
    expect(issues({ messages: [{ role: "user", content: 5 }] })[0]!.loc).toEqual(["body", "messages", 0, "content"]);
  });

  it("enforces the ranges interface.md states: seed within int64, truncate_prompt_tokens ≥ -1", () => {
    expect(issues({ messages: user, seed: 2 ** 64 })).toEqual([{ loc: ["body", "seed"], msg: expect.stringContaining("less than or equal"), type: "less_than_equal" }]);
    expect(issues({ messages: user, seed: -(2 ** 64) })[0]!.type).toBe("greater_than_equal");
    expect(parse({ messages: user, seed: -1 }).seed).toBe(-1);
    expect(issues({ messages: user, truncate_prompt_tokens: -2 })).toEqual([{ loc: ["body", "truncate_prompt_tokens"], msg: "Input should be greater than or equal to -1", type: "greater_than_equal" }]);
    expect(parse({ messages: user, truncate_prompt_tokens: -1 }).truncate_prompt_tokens).toBe(-1);
  });

  it("checks int64 bounds exactly on the decimal text of integers a double cannot hold", () => {
    expect(parse({ messages: user, seed: "9223372036854775807" }).seed).toBe(2 ** 63);
    expect(parse({ messages: user, seed: "-9223372036854775808" }).seed).toBe(-(2 ** 63));
    expect(issues({ messages: user, seed: "9223372036854775808" })).toEqual([{ loc: ["body", "seed"], msg: "Input should be less than or equal to 9223372036854775807", type: "less_than_equal" }]);
    expect(issues({ messages: user, seed: "-9223372036854775809" })).toEqual([{ loc: ["body", "seed"], msg: "Input should be greater than or equal to -9223372036854775808", type: "greater_than_equal" }]);
    // A number is taken at its exact value: 2^63 itself is out of range.
    expect(issues({ messages: user, seed: 2 ** 63 })[0]!.type).toBe("less_than_equal");
    expect(issues({ messages: user, seed: 1.5 })[0]!.type).toBe("int_from_float");
    expect(issues({ messages: user, priority: "9223372036854775808" })[0]!.loc).toEqual(["body", "priority"]);
  });

  it("rejects enum values and unknown response_format types", () => {
    expect(issues({ messages: user, reasoning_effort: "extreme" })[0]).toMatchObject({ loc: ["body", "reasoning_effort"], type: "literal_error" });
    expect(issues({ messages: user, tool_choice: "sometimes" })[0]!.loc).toEqual(["body", "tool_choice"]);
    expect(issues({ messages: user, response_format: { type: "yaml" } })[0]!.loc.slice(0, 2)).toEqual(["body", "response_format"]);
    expect(issues({ messages: user, stop: ["a", "b", "c", "d", "e"] })[0]).toMatchObject({ loc: ["body", "stop"], type: "too_long" });
  });

  it("accepts every documented shape of the structured fields", () => {
    const req = parse({
      messages: [
        { role: "system", content: [{ type: "text", text: "be brief" }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }], reasoning_content: "r" },
        { role: "tool", content: "42", tool_call_id: "c1" },
        { role: "narrator", content: ["once", { type: "input_text", text: "upon" }] },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" }, strict: true } },
      structured_outputs: { regex: "a+" },
      stream_options: { include_usage: true },
      stop: "END",
      documents: [{ title: "t", text: "x" }],
      chat_template_kwargs: { enable_thinking: false },
      repetition_detection: { max_pattern_size: 4, min_count: 3 },
      vllm_xargs: { a: [1, "b"] },
      kv_transfer_params: { any: "thing" },
    });
    expect(req.tool_choice).toEqual({ type: "function", function: { name: "f" } });
    expect(req.repetition_detection).toEqual({ max_pattern_size: 4, min_pattern_size: 0, min_count: 3 });
    expect(req.structured_outputs).toMatchObject({ regex: "a+", disable_any_whitespace: false });
    expect(req.stop).toBe("END");
  });

  it("documents itself as JSON Schema for /openapi.json", () => {
    const json = z.toJSONSchema(ChatCompletionReq, { io: "input", unrepresentable: "any" }) as { properties: Record<string, { type?: unknown }>; required: string[] };
    expect(json.required).toEqual(["messages"]);
    expect(json.properties.logprobs!.type).toEqual(["boolean", "null"]);
    expect(json.properties.n!.type).toEqual(["integer", "null"]);
    expect(json.properties.include_reasoning!.type).toBe("boolean");
  });
});
