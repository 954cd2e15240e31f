import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";

const timeTool = { name: "get_time", description: "The time in a zone", input_schema: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "CET"] } }, required: ["zone"] } };

/** The events of an Anthropic-style stream: `event: <name>\ndata: <json>` frames, nothing else. */
async function namedEvents(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      const match = /^event: ([a-z_]+)\ndata: (.*)$/s.exec(frame);
      if (!match) throw new Error(`unexpected frame ${JSON.stringify(frame)}`);
      const data = JSON.parse(match[2]!) as Record<string, unknown>;
      expect(data.type).toBe(match[1]);
      return { event: match[1]!, data };
    });
}

/**
 * POST /v1/messages (Anthropic's Messages API) end to end on a real engine: the same generation as
 * chat completions for the same conversation, system prompts, tool_use/tool_result turns, stop
 * sequences, streaming events in Anthropic's order, `x-api-key`, and Anthropic's error shape.
 */
describe("POST /v1/messages end to end", () => {
  const model = tinyModel("qwen2");
  let server: ChatServer;

  const post = (body: Record<string, unknown>, headers: Record<string, string> = { "x-api-key": server.app.keys.alice }) =>
    fetch(`${server.baseURL}/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify(body) });
  const base = { model: "test/tiny", max_tokens: 8, temperature: 0 };

  beforeAll(async () => {
    server = await startChatServer("sqlite", { servedModels: { "test/tiny": model.dir } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers a message that matches chat's greedy completion of the same conversation", async () => {
    const response = await post({ ...base, system: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }] });
    expect(response.status).toBe(200);
    const message = (await response.json()) as Record<string, unknown> & { content: { type: string; text?: string }[]; usage: Record<string, number> };
    const chat = await server.create({
      model: "test/tiny",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ],
      max_completion_tokens: 8,
      temperature: 0,
    });
    expect(message).toMatchObject({ type: "message", role: "assistant", model: "test/tiny", stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual(chat.choices[0]!.message.content ? [{ type: "text", text: chat.choices[0]!.message.content }] : []);
    expect(message.stop_reason).toBe(chat.choices[0]!.finish_reason === "length" ? "max_tokens" : "end_turn");
    expect(message.usage).toMatchObject({ input_tokens: chat.usage.prompt_tokens, output_tokens: chat.usage.completion_tokens });
  });

  it("stops at a stop sequence and says which", async () => {
    const free = (await (await post({ ...base, max_tokens: 12, messages: [{ role: "user", content: "Go on" }] })).json()) as { content: { text: string }[] };
    const text = free.content[0]!.text;
    const stop = text.slice(3, 5);
    const cut = (await (await post({ ...base, max_tokens: 12, messages: [{ role: "user", content: "Go on" }], stop_sequences: ["\u0000never", stop] })).json()) as Record<string, unknown>;
    expect(cut).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: stop });
  });

  it("calls a forced tool, then takes its result back in the next turn", async () => {
    const first = (await (await post({ ...base, max_tokens: 40, tools: [timeTool], tool_choice: { type: "tool", name: "get_time" }, messages: [{ role: "user", content: "Time?" }] })).json()) as {
      content: { type: string; id: string; name: string; input: { zone: string } }[];
      stop_reason: string;
    };
    const call = first.content.find((block) => block.type === "tool_use")!;
    expect(call.id).toMatch(/^toolu_/);
    expect(call.name).toBe("get_time");
    expect(["UTC", "CET"]).toContain(call.input.zone);
    const second = await post({
      ...base,
      tools: [timeTool],
      messages: [
        { role: "user", content: "Time?" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: call.id, content: "12:00" },
            { type: "text", text: "Thanks" },
          ],
        },
      ],
    });
    expect(second.status).toBe(200);
    // The tool result reached the prompt: the chat-messages tokenization of the same turns has as many tokens.
    const tokenized = (await (
      await fetch(`${server.baseURL.replace(/\/v1$/, "")}/tokenize`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.app.keys.alice}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "test/tiny",
          tools: [{ type: "function", function: { name: "get_time", description: "The time in a zone", parameters: timeTool.input_schema } }],
          messages: [
            { role: "user", content: "Time?" },
            { role: "assistant", content: "", tool_calls: [{ id: call.id, type: "function", function: { name: "get_time", arguments: JSON.stringify(call.input) } }] },
            { role: "tool", tool_call_id: call.id, content: "12:00" },
            { role: "user", content: "Thanks" },
          ],
        }),
      })
    ).json()) as { count: number };
    expect(((await second.json()) as { usage: { input_tokens: number } }).usage.input_tokens).toBe(tokenized.count);
  });

  it("streams Anthropic's events in order, with the same text as the whole message", async () => {
    const body = { ...base, messages: [{ role: "user", content: "Stream please" }] };
    const whole = (await (await post(body)).json()) as { content: { text: string }[]; stop_reason: string; usage: { output_tokens: number } };
    const events = await namedEvents(await post({ ...body, stream: true }));
    const names = events.map((event) => event.event);
    expect(names[0]).toBe("message_start");
    expect(names[1]).toBe("ping");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(names).toContain("content_block_start");
    expect(names.at(-3)).toBe("content_block_stop");
    const text = events
      .filter((event) => event.event === "content_block_delta")
      .map((event) => (event.data.delta as { text: string }).text)
      .join("");
    expect(text).toBe(whole.content[0]?.text ?? "");
    expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: whole.stop_reason }, usage: { output_tokens: whole.usage.output_tokens } });
  });

  it("streams a tool call as a tool_use block with input_json_delta fragments", async () => {
    const events = await namedEvents(await post({ ...base, max_tokens: 40, stream: true, tools: [timeTool], tool_choice: { type: "tool", name: "get_time" }, messages: [{ role: "user", content: "Time?" }] }));
    const start = events.find((event) => event.event === "content_block_start" && (event.data.content_block as { type: string }).type === "tool_use")!;
    expect(start.data.content_block).toMatchObject({ type: "tool_use", name: "get_time", input: {} });
    const json = events
      .filter((event) => event.event === "content_block_delta" && event.data.index === start.data.index)
      .map((event) => (event.data.delta as { type: string; partial_json: string }).partial_json)
      .join("");
    expect(["UTC", "CET"]).toContain((JSON.parse(json) as { zone: string }).zone);
  });

  it("answers errors in Anthropic's shape, also for schema failures and a missing key", async () => {
    const invalid = await post({ model: "test/tiny", messages: [{ role: "user", content: "x" }] });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("max_tokens: Field required") } });
    const unknown = await post({ ...base, model: "nope", messages: [{ role: "user", content: "x" }] });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    const image = await post({ ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "" } }] }] });
    expect(image.status).toBe(400);
    expect(((await image.json()) as { error: { message: string } }).error.message).toContain("'image' are not supported");
    const range = await post({ ...base, temperature: 5, messages: [{ role: "user", content: "x" }] });
    expect(await range.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("temperature") } });
    const anonymous = await post({ ...base, messages: [{ role: "user", content: "x" }] }, {});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });
});
