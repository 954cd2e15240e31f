import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatParams, type ChatServer, type Chunk, chunksOf, readSse, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

const weather = { type: "function", function: { name: "get_weather", description: "Current weather", parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"] } } };
const time = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "CET"] } }, required: ["zone"] } }, strict: true };
const tools = [weather, time];

/** A regex for `count` Hermes tool-call blocks after a short preamble, to make a random model write them. */
function hermesCalls(count: number): string {
  const block = String.raw`<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "(Paris|Rome)"\}\}\n</tool_call>`;
  return `Sure\\. ${Array.from({ length: count }, () => block).join("\\n")}`;
}

/** Per tool-call index: the name and the concatenated argument fragments of a stream's deltas. */
function streamedCalls(chunks: Chunk[]): { id?: string; name?: string; arguments: string }[] {
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[delta.index] ??= { arguments: "" });
      if (delta.id) call.id = delta.id;
      if (delta.function.name) call.name = delta.function.name;
      call.arguments += delta.function.arguments ?? "";
    }
  }
  return calls;
}

const finishReasons = (chunks: Chunk[]) => chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.finish_reason !== null).map((choice) => choice.finish_reason));
const streamedText = (chunks: Chunk[], field: "content" | "reasoning") => chunks.map((chunk) => chunk.choices[0]?.delta[field] ?? "").join("");

/**
 * Tool calling and reasoning end to end (`docs/api/chat.md#tools`, `docs/api/chat.md#reasoning`) on a real
 * engine: forced choices (`required`, a named function) constrained by xgrammar and parsed into tool_calls,
 * Hermes `<tool_call>` blocks parsed under `auto`, parallel_tool_calls, and `<think>` output split into
 * `reasoning` — whole and streamed. Where a random model must write a particular shape, a regex constraint
 * makes it; the parsers then work on what the engine generated.
 */
describe.each(testDialects)("tools and reasoning end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let tokenizer: Tokenizer;
  /** Favours closing the `required` array after its first call, so a random model finishes. */
  let closeArray: Record<string, number>;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    temperature: 0,
    repetition_penalty: 1,
    max_completion_tokens: 80,
    ...fields,
  });
  const stream = async (fields: Record<string, unknown>) => chunksOf(await readSse(await server.post({ ...params(fields), stream: true })));

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
    closeArray = { [tokenizer.encode("]")[0]!]: 5 };
  });
  afterAll(async () => {
    await server?.close();
  });

  it("renders the tools into the model's template", async () => {
    const completion = await server.create(params({ tools, tool_choice: "none", max_completion_tokens: 1, return_token_ids: true }));
    const prompt = tokenizer.decode(completion.prompt_token_ids!, { skipSpecialTokens: false });
    expect(prompt).toContain(
      '<tools>\n{"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}}, "required": ["city"]}}}',
    );
    expect(prompt).toContain('"name": "get_time"');
  });

  it("forces a call of one of the tools with tool_choice required", async () => {
    const completion = await server.create(params({ tools, tool_choice: "required", logit_bias: closeArray }));
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("");
    expect(choice.message.tool_calls!.length).toBeGreaterThan(0);
    for (const call of choice.message.tool_calls!) {
      expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
      expect(call.type).toBe("function");
      const args = JSON.parse(call.function.arguments) as Record<string, string>;
      if (call.function.name === "get_weather") expect(["Paris", "Rome"]).toContain(args.city);
      else expect(["UTC", "CET"]).toContain(args.zone);
    }
    // Streamed, the same calls arrive as deltas.
    const chunks = await stream({ tools, tool_choice: "required", logit_bias: closeArray });
    const calls = streamedCalls(chunks);
    expect(calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown }))).toEqual(
      choice.message.tool_calls!.map((call) => ({ name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown })),
    );
    expect(calls.every((call) => /^chatcmpl-tool-/.test(call.id ?? ""))).toBe(true);
    expect(finishReasons(chunks)).toEqual(["tool_calls"]);
    // Out of budget: no call, finish_reason length.
    const cut = await server.create(params({ tools, tool_choice: "required", max_completion_tokens: 1 }));
    expect(cut.choices[0]).toMatchObject({ finish_reason: "length" });
    expect(cut.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it("forces the named function, its arguments valid for its schema", async () => {
    const named = { type: "function", function: { name: "get_time" } };
    const completion = await server.create(params({ tools, tool_choice: named, response_format: { type: "json_object" } }));
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.content).toBe("");
    expect(choice.message.tool_calls).toHaveLength(1);
    expect(choice.message.tool_calls![0]!.function.name).toBe("get_time");
    expect(["UTC", "CET"]).toContain((JSON.parse(choice.message.tool_calls![0]!.function.arguments) as { zone: string }).zone);
    const chunks = await stream({ tools, tool_choice: named });
    // The first fragment names the call and already carries argument text (vLLM's named-choice stream).
    const firstFragment = chunks.find((chunk) => chunk.choices[0]?.delta.tool_calls)!.choices[0]!.delta.tool_calls![0]!;
    expect(firstFragment).toMatchObject({ index: 0, type: "function", function: { name: "get_time" } });
    expect(firstFragment.function.arguments).not.toBe("");
    const calls = streamedCalls(chunks);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe("get_time");
    expect(JSON.parse(calls[0]!.arguments)).toEqual(JSON.parse(choice.message.tool_calls![0]!.function.arguments));
    expect(finishReasons(chunks)).toEqual(["stop"]);
    await expect(server.client.chat.completions.create(params({ tools, tool_choice: { type: "function", function: { name: "nope" } } }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("The tool specified in `tool_choice` does not match any of the specified `tools`"),
    });
  });

  it("parses generated <tool_call> blocks under auto, the implicit choice when tools are sent", async () => {
    for (const fields of [{ tool_choice: "auto" }, {}]) {
      const completion = await server.create(params({ tools, ...fields, structured_outputs: { regex: hermesCalls(1) } }));
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.content).toBe("Sure. ");
      expect(choice.message.tool_calls).toHaveLength(1);
      expect(choice.message.tool_calls![0]!.function.name).toBe("get_weather");
      expect(["Paris", "Rome"]).toContain((JSON.parse(choice.message.tool_calls![0]!.function.arguments) as { city: string }).city);
    }
    const chunks = await stream({ tools, structured_outputs: { regex: hermesCalls(1) } });
    expect(streamedText(chunks, "content")).toBe("Sure. ");
    const calls = streamedCalls(chunks);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe("get_weather");
    expect(["Paris", "Rome"]).toContain((JSON.parse(calls[0]!.arguments) as { city: string }).city);
    expect(finishReasons(chunks)).toEqual(["tool_calls"]);
    // No block in the output: plain content, the engine's finish reason.
    const plain = await server.create(params({ tools, structured_outputs: { regex: "Sunny in [A-Z][a-z]{2,8}" } }));
    expect(plain.choices[0]).toMatchObject({ finish_reason: "stop" });
    expect(plain.choices[0]!.message.content).toMatch(/^Sunny in [A-Z][a-z]{2,8}$/);
    expect(plain.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it("keeps only the first call when parallel_tool_calls is false", async () => {
    const both = await server.create(params({ tools, structured_outputs: { regex: hermesCalls(2) }, max_completion_tokens: 120 }));
    expect(both.choices[0]!.message.tool_calls).toHaveLength(2);
    const first = await server.create(params({ tools, parallel_tool_calls: false, structured_outputs: { regex: hermesCalls(2) }, max_completion_tokens: 120 }));
    expect(first.choices[0]!.message.tool_calls!.map((call) => call.function)).toEqual([both.choices[0]!.message.tool_calls![0]!.function]);
    const streamedBoth = streamedCalls(await stream({ tools, structured_outputs: { regex: hermesCalls(2) }, max_completion_tokens: 120 }));
    expect(streamedBoth).toHaveLength(2);
    const streamedFirst = streamedCalls(await stream({ tools, parallel_tool_calls: false, structured_outputs: { regex: hermesCalls(2) }, max_completion_tokens: 120 }));
    expect(streamedFirst.map((call) => call.arguments)).toEqual([streamedBoth[0]!.arguments]);
  });

  it("leaves <tool_call> text in the content with tool_choice none", async () => {
    const completion = await server.create(params({ tools, tool_choice: "none", structured_outputs: { regex: hermesCalls(1) } }));
    expect(completion.choices[0]!.message.content).toMatch(/^Sure\. <tool_call>\n\{"name": "get_weather"/);
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]!.finish_reason).toBe("stop");
  });

  it("splits <think> output into reasoning, whole and streamed, and hides it with include_reasoning false", async () => {
    const thinking = { structured_outputs: { regex: "<think>[a-z ]{4,12}</think>[a-z ]{4,12}" }, logprobs: true, return_token_ids: true };
    const completion = await server.create(params(thinking));
    const message = completion.choices[0]!.message;
    expect(message.reasoning).toMatch(/^[a-z ]{4,12}$/);
    expect(message.content).toMatch(/^[a-z ]{4,12}$/);
    const text = tokenizer.decode(completion.choices[0]!.token_ids!, { skipSpecialTokens: true });
    expect(text).toBe(`<think>${message.reasoning}</think>${message.content}`);

    const chunks = await stream(thinking);
    expect(streamedText(chunks, "reasoning")).toBe(message.reasoning);
    expect(streamedText(chunks, "content")).toBe(message.content);
    expect(chunks.flatMap((chunk) => chunk.choices[0]?.token_ids ?? [])).toEqual(completion.choices[0]!.token_ids);

    const hidden = await server.create(params({ ...thinking, include_reasoning: false }));
    expect(hidden.choices[0]!.message).toMatchObject({ reasoning: null, content: message.content });
    expect(hidden.choices[0]!.logprobs).toBeNull();
    expect(hidden.choices[0]!.token_ids).toBeNull();
    const hiddenChunks = await stream({ ...thinking, include_reasoning: false });
    expect(streamedText(hiddenChunks, "reasoning")).toBe("");
    expect(streamedText(hiddenChunks, "content")).toBe(message.content);
    expect(hiddenChunks.some((chunk) => chunk.choices[0]?.token_ids !== undefined || (chunk.choices[0]?.logprobs ?? null) !== null)).toBe(false);
  });

  it("passes reasoning_effort to the template: none pre-closes thinking, so all output is content", async () => {
    const thinking = { structured_outputs: { regex: "<think>[a-z ]{4,12}</think>[a-z ]{4,12}" } };
    const high = await server.create(params({ ...thinking, reasoning_effort: "high" }));
    expect(high.choices[0]!.message.reasoning).not.toBeNull();
    const none = await server.create(params({ ...thinking, reasoning_effort: "none" }));
    expect(none.choices[0]!.message.reasoning).toBeNull();
    expect(none.choices[0]!.message.content).toMatch(/^<think>[a-z ]{4,12}<\/think>[a-z ]{4,12}$/);
    await expect(server.client.chat.completions.create(params({ reasoning_effort: "extreme" }))).rejects.toMatchObject({ status: 422 });
  });
});
