import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

const timeTool = {
  type: "function" as const,
  name: "get_time",
  description: "The time in a zone",
  strict: true,
  parameters: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "CET"] } }, required: ["zone"], additionalProperties: false },
};

/**
 * The Responses API end to end through the official OpenAI SDK on a real engine: text and item
 * input, instructions, previous_response_id over stored responses (scoped to the key's entity),
 * function calls and their outputs, text.format, max_output_tokens, streaming events, and
 * GET/DELETE of stored responses.
 */
describe.each(testDialects)("the Responses API end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let bob: OpenAI;
  const base = { model: "test/tiny", temperature: 0, max_output_tokens: 6 };

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
    bob = new OpenAI({ baseURL: server.baseURL, apiKey: server.app.keys.bob, maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers text input with the same generation chat gives the same conversation", async () => {
    const response = await server.client.responses.create({ ...base, instructions: "Be brief.", input: "Hello" });
    const chat = await server.create({
      model: "test/tiny",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ],
      temperature: 0,
      max_completion_tokens: 6,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.object).toBe("response");
    expect(response.output_text).toBe(chat.choices[0]!.message.content ?? "");
    expect(response.status).toBe(chat.choices[0]!.finish_reason === "length" ? "incomplete" : "completed");
    if (response.status === "incomplete") expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.usage).toMatchObject({ input_tokens: chat.usage.prompt_tokens, output_tokens: chat.usage.completion_tokens });
    expect(response.instructions).toBe("Be brief.");
  });

  it("continues a stored response with previous_response_id, for its own entity only", async () => {
    const first = await server.client.responses.create({ ...base, input: [{ role: "user", content: "Hi" }] });
    const second = await server.client.responses.create({ ...base, previous_response_id: first.id, input: "And then?" });
    // The same conversation written out in full gives the same prompt.
    const spelled = await server.client.responses.create({
      ...base,
      store: false,
      input: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: first.output_text },
        { role: "user", content: "And then?" },
      ],
    });
    expect(second.usage!.input_tokens).toBe(spelled.usage!.input_tokens);
    expect(second.output_text).toBe(spelled.output_text);
    expect(second.previous_response_id).toBe(first.id);
    expect((await server.client.responses.retrieve(second.id)).output_text).toBe(second.output_text);
    // Not stored, so not retrievable; another entity's response is not found either.
    await expect(server.client.responses.retrieve(spelled.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(bob.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(bob.responses.create({ ...base, previous_response_id: first.id, input: "x" })).rejects.toMatchObject({ status: 404, message: expect.stringContaining("not found") });
    await server.client.responses.delete(first.id);
    await expect(server.client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("calls a forced function, then continues from its output", async () => {
    const call = await server.client.responses.create({ ...base, max_output_tokens: 40, tools: [timeTool], tool_choice: { type: "function", name: "get_time" }, input: "Time?" });
    const item = call.output.find((output) => output.type === "function_call")!;
    expect(item).toMatchObject({ type: "function_call", name: "get_time", status: "completed" });
    if (item.type !== "function_call") throw new Error("no call");
    expect(["UTC", "CET"]).toContain((JSON.parse(item.arguments) as { zone: string }).zone);
    const answer = await server.client.responses.create({ ...base, tools: [timeTool], previous_response_id: call.id, input: [{ type: "function_call_output", call_id: item.call_id, output: "12:00" }] });
    expect(answer.status).toMatch(/^(completed|incomplete)$/);
    // Written out as items, the same turns give the same prompt.
    const spelled = await server.client.responses.create({
      ...base,
      store: false,
      tools: [timeTool],
      input: [
        { role: "user", content: "Time?" },
        { type: "function_call", call_id: item.call_id, name: item.name, arguments: item.arguments },
        { type: "function_call_output", call_id: item.call_id, output: "12:00" },
      ],
    });
    expect(answer.usage!.input_tokens).toBe(spelled.usage!.input_tokens);
  });

  it("constrains the text to a JSON schema with text.format", async () => {
    const response = await server.client.responses.create({ ...base, max_output_tokens: 40, input: "Zone?", text: { format: { type: "json_schema", name: "zone", schema: timeTool.parameters, strict: true } } });
    expect(["UTC", "CET"]).toContain((JSON.parse(response.output_text) as { zone: string }).zone);
  });

  it("streams the Responses events, ending with the whole response, which is stored", async () => {
    const whole = await server.client.responses.create({ ...base, input: "Stream it", store: false });
    const stream = await server.client.responses.create({ ...base, input: "Stream it", stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed" || event.type === "response.incomplete") final = event.response;
    }
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.content_part.added");
    expect(types).toContain("response.output_text.done");
    expect(types).toContain("response.output_item.done");
    expect(["response.completed", "response.incomplete"]).toContain(types.at(-1));
    expect(sequence).toEqual(sequence.map((_, index) => index));
    expect(text).toBe(whole.output_text);
    expect(final!.output_text ?? (final!.output[0] as { content: { text: string }[] }).content[0]!.text).toBe(whole.output_text);
    expect((await server.client.responses.retrieve(final!.id)).output).toEqual(final!.output);
  });

  it("streams a function call with its argument deltas", async () => {
    const stream = await server.client.responses.create({ ...base, max_output_tokens: 40, stream: true, tools: [timeTool], tool_choice: { type: "function", name: "get_time" }, input: "Time?" });
    let args = "";
    let done: { name: string; arguments: string } | undefined;
    for await (const event of stream) {
      if (event.type === "response.function_call_arguments.delta") args += event.delta;
      if (event.type === "response.output_item.done" && event.item.type === "function_call") done = event.item;
    }
    expect(done).toBeDefined();
    expect(done!.arguments).toBe(args);
    expect(done!.name).toBe("get_time");
    expect(["UTC", "CET"]).toContain((JSON.parse(args) as { zone: string }).zone);
  });

  it("refuses what it cannot do, in the OpenAI error shape", async () => {
    await expect(server.client.responses.create({ ...base, input: "x", tools: [{ type: "web_search" }] as never })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("'web_search'") });
    await expect(server.client.responses.create({ ...base, input: "x", temperature: 7 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(server.client.responses.create({ ...base, model: "nope", input: "x" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(server.client.responses.create({ ...base, input: 5 as never })).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});
