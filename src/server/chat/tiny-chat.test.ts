import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledModelsDir } from "../../config.js";
import { CONVERT_TOOL, TINY_CHAT_TOOLS, WEATHER_TOOL } from "../../engine/tiny-chat/tools.js";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { testDialects } from "../../testing/stores.js";

const MODEL = "flywheel/tiny-chat";

/**
 * The bundled model through the chat endpoint with the OpenAI SDK, greedy: it answers arithmetic,
 * and its tool calls and structured outputs come back as parsed tool_calls and valid JSON. Every
 * question below is from the held-out split (its operand pair, request or record never occurs in
 * training; `splitOf` in src/engine/tiny-chat/dataset.ts).
 */
describe.each(testDialects)("flywheel/tiny-chat through /v1/chat/completions (%s)", (dialect) => {
  let t: TestApp;
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTestApp(dialect, { servedModels: { [MODEL]: path.join(bundledModelsDir, "flywheel", "tiny-chat") } });
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    client = new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  it("is listed by GET /v1/models", async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toContain(MODEL);
  });

  it("answers an arithmetic question with the right number", async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "What is 14 + 45?" }], temperature: 0, max_completion_tokens: 8 });
    expect(completion.choices[0]!.message.content?.trim()).toBe("59");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
  });

  it("fills a json_schema response format with valid JSON holding the extracted fields", async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Extract the name and age as JSON.\nMaria is 40 years old." }],
      temperature: 0,
      max_completion_tokens: 40,
      response_format: {
        type: "json_schema",
        json_schema: { name: "person", strict: true, schema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name", "age"], additionalProperties: false } },
      },
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ name: "Maria", age: 40 });
  });

  it("calls a tool with tool_choice auto, as parsed tool_calls", async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "What's the weather in Paris?" }], tools: [WEATHER_TOOL], temperature: 0, max_completion_tokens: 48 });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.name).toBe("get_weather");
    expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ city: "Paris" });
  });

  it("calls a tool with tool_choice required, and answers from the tool's result", async () => {
    const question = { role: "user" as const, content: "Convert 20 km to miles." };
    const completion = await client.chat.completions.create({ model: MODEL, messages: [question], tools: [...TINY_CHAT_TOOLS], tool_choice: "required", temperature: 0, max_completion_tokens: 64 });
    const call = completion.choices[0]!.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe(CONVERT_TOOL.function.name);
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ value: 20, from_unit: "km", to_unit: "miles" });

    const answer = await client.chat.completions.create({
      model: MODEL,
      messages: [question, completion.choices[0]!.message, { role: "tool", tool_call_id: call!.id, content: '{"result": 12.43}' }],
      tools: [...TINY_CHAT_TOOLS],
      temperature: 0,
      max_completion_tokens: 32,
    });
    expect(answer.choices[0]!.message.content).toContain("12.43");
  });
});
