import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledModelsDir } from "../../../config.js";
import { TINY_CHAT_TOOLS, WEATHER_TOOL } from "../../../engine/tiny-chat/tools.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";

const MODEL = "flywheel/tiny-chat";

/**
 * The bundled model through the chat endpoint with the OpenAI SDK, greedy: its replies come back in
 * the shapes clients rely on (a number with its reasoning apart, JSON that fits the requested schema,
 * parsed tool calls), and the README's own questions get the right answers. How often replies are
 * right in general is measured on the held-out split (committed-model.test.ts, eval.json).
 */
describe("the default model catalog", () => {
  it("serves the bundled flywheel/tiny-chat with no model configured", async () => {
    const t = await startTestApp("sqlite");
    try {
      const res = await t.request(t.keys.alice, { method: "GET", url: "/v1/models" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((model: { id: string }) => model.id)).toContain(MODEL);
    } finally {
      await t.close();
    }
  });
});

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

  it("answers arithmetic with the number as content and its column work as reasoning", async () => {
    for (const [question, answer, work] of [
      ["What is 2 + 3?", "5", "2 + 3\nones: 2 + 3 = 5\ntens: 0 + 0 + 0 = 0"],
      ["What is 7 + 5?", "12", "7 + 5\nones: 7 + 5 = 12\ntens: 0 + 0 + 1 = 1"],
      ["What is 14 + 45?", "59", "14 + 45\nones: 4 + 5 = 9\ntens: 1 + 4 + 0 = 5"],
    ]) {
      const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: question! }], temperature: 0, max_completion_tokens: 64 });
      const message = completion.choices[0]!.message as { content: string | null; reasoning?: string | null };
      expect(message.content?.trim(), question).toBe(answer);
      expect(message.reasoning?.trim(), question).toBe(work);
      expect(completion.choices[0]!.finish_reason).toBe("stop");
    }
  });

  it("copies a name it never saw in training from the prompt", async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "My name is Ana." }], temperature: 0, max_completion_tokens: 32 });
    expect(completion.choices[0]!.message.content).toMatch(/\bAna\b/);
  });

  it("fills a json_schema response format with JSON that has the schema's fields", async () => {
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
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    const person = JSON.parse(completion.choices[0]!.message.content!) as Record<string, unknown>;
    expect(Object.keys(person).sort()).toEqual(["age", "name"]);
    expect(typeof person.name).toBe("string");
    expect(Number.isInteger(person.age)).toBe(true);
  });

  it("calls a tool with tool_choice auto, as parsed tool_calls", async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "What's the weather in Paris?" }], tools: [WEATHER_TOOL], temperature: 0, max_completion_tokens: 48 });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.name).toBe("get_weather");
    expect(JSON.parse(call.type === "function" ? call.function.arguments : "null")).toEqual({ city: "Paris" });
  });

  it("calls a tool with tool_choice required, and answers after the tool's result", async () => {
    const question = { role: "user" as const, content: "Convert 20 km to miles." };
    const completion = await client.chat.completions.create({ model: MODEL, messages: [question], tools: [...TINY_CHAT_TOOLS], tool_choice: "required", temperature: 0, max_completion_tokens: 64 });
    const calls = completion.choices[0]!.message.tool_calls ?? [];
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      const tool = TINY_CHAT_TOOLS.find((candidate) => call.type === "function" && candidate.function.name === call.function.name);
      expect(tool, JSON.stringify(call)).toBeDefined();
      const args = JSON.parse(call.type === "function" ? call.function.arguments : "null") as Record<string, unknown>;
      for (const required of tool!.function.parameters.required) expect(args, JSON.stringify(args)).toHaveProperty(required);
    }

    const answer = await client.chat.completions.create({
      model: MODEL,
      messages: [question, completion.choices[0]!.message, ...calls.map((call) => ({ role: "tool" as const, tool_call_id: call.id, content: '{"result": 12.43}' }))],
      tools: [...TINY_CHAT_TOOLS],
      temperature: 0,
      max_completion_tokens: 32,
    });
    expect(answer.choices[0]!.finish_reason).toBe("stop");
    expect(answer.choices[0]!.message.content?.trim()).not.toBe("");
  });
});
