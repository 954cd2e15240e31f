import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatServer, readSse, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";

interface LegacyChoice {
  index: number;
  text: string;
  logprobs: { tokens: string[]; token_logprobs: (number | null)[]; top_logprobs: (Record<string, number> | null)[]; text_offset: number[] } | null;
  finish_reason: string | null;
  stop_reason?: number | string | null;
  token_ids?: number[] | null;
  prompt_token_ids?: number[] | null;
}

/**
 * POST /v1/completions end to end on a real engine, through the official OpenAI SDK: text and
 * token-id prompts, several prompts, echo with logprobs, streaming, structured outputs, the same
 * sampling as chat (a greedy completion of a prompt equals chat's greedy completion of the same
 * tokens), and vLLM's refusals in the OpenAI error shape.
 */
describe("POST /v1/completions end to end", () => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let tokenizer: Tokenizer;
  const base = { model: "test/tiny", temperature: 0, max_tokens: 6, ignore_eos: true } as const;

  beforeAll(async () => {
    server = await startChatServer("sqlite", { servedModels: { "test/tiny": model.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("completes a text prompt with the SDK, with logprobs in the legacy shape", async () => {
    const completion = await server.client.completions.create({ ...base, prompt: "Once upon a time", logprobs: 2, return_token_ids: true, return_tokens_as_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(completion.object).toBe("text_completion");
    expect(completion.id).toMatch(/^cmpl-/);
    expect(completion.model).toBe("test/tiny");
    const choice = completion.choices[0] as unknown as LegacyChoice;
    expect(choice.finish_reason).toBe("length");
    expect(choice.token_ids).toHaveLength(6);
    expect(tokenizer.decode(choice.token_ids!, { skipSpecialTokens: true })).toBe(choice.text);
    expect(choice.prompt_token_ids).toEqual(tokenizer.encode("Once upon a time", { addSpecialTokens: true }));
    const logprobs = choice.logprobs!;
    expect(logprobs.tokens).toHaveLength(6);
    expect(logprobs.token_logprobs.every((value) => typeof value === "number" && value <= 0)).toBe(true);
    expect(logprobs.tokens).toEqual(choice.token_ids!.map((id) => `token_id:${id}`));
    // The top dict holds the sampled token and the 2 best; greedy sampled the best, so 2 distinct entries.
    for (const [index, top] of logprobs.top_logprobs.entries()) {
      expect(Object.keys(top!)[0]).toBe(logprobs.tokens[index]);
      expect(Object.keys(top!)).toHaveLength(2);
      expect(Math.max(...Object.values(top!))).toBe(logprobs.token_logprobs[index]);
    }
    expect(logprobs.text_offset[0]).toBe(0);
    expect(completion.usage).toMatchObject({ prompt_tokens: choice.prompt_token_ids!.length, completion_tokens: 6, total_tokens: choice.prompt_token_ids!.length + 6 });
  });

  it("samples exactly as chat completions do for the same prompt tokens", async () => {
    const chat = await server.create({ model: "test/tiny", messages: [{ role: "user", content: "Hello" }], temperature: 0, max_completion_tokens: 6, ignore_eos: true, return_token_ids: true });
    const promptIds = chat.prompt_token_ids!;
    const legacy = await server.client.completions.create({ ...base, prompt: promptIds, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
    const choice = legacy.choices[0] as unknown as LegacyChoice;
    expect(choice.token_ids).toEqual(chat.choices[0]!.token_ids);
    expect(choice.prompt_token_ids).toEqual(promptIds);
  });

  it("answers several prompts (text and token ids) with n choices each, indexed prompt-major", async () => {
    const ids = tokenizer.encode("abc", { addSpecialTokens: false });
    const completion = await server.client.completions.create({ ...base, temperature: 0.8, seed: 3, n: 2, prompt: [ids, [...ids, ...ids]] });
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1, 2, 3]);
    const texts = await server.client.completions.create({ ...base, prompt: ["one", "two", "three"] });
    expect(texts.choices).toHaveLength(3);
    expect(texts.usage!.completion_tokens).toBe(18);
  });

  it("echoes the prompt, with the prompt's logprobs before the generated ones", async () => {
    const prompt = "The sky is";
    const promptIds = tokenizer.encode(prompt, { addSpecialTokens: true });
    const completion = await server.client.completions.create({ ...base, prompt, echo: true, logprobs: 1 });
    const choice = completion.choices[0] as unknown as LegacyChoice;
    expect(choice.text.startsWith(prompt)).toBe(true);
    expect(choice.text.length).toBeGreaterThan(prompt.length);
    const logprobs = choice.logprobs!;
    expect(logprobs.tokens).toHaveLength(promptIds.length + 6);
    expect(logprobs.token_logprobs[0]).toBeNull();
    expect(logprobs.top_logprobs[0]).toBeNull();
    expect(logprobs.token_logprobs.slice(1).every((value) => typeof value === "number")).toBe(true);
    expect(logprobs.text_offset[promptIds.length]).toBe(prompt.length);
  });

  it("streams with the SDK: the same text as the whole response, a finish chunk and usage", async () => {
    const whole = await server.client.completions.create({ ...base, prompt: "Streaming works" });
    const stream = await server.client.completions.create({ ...base, prompt: "Streaming works", stream: true, stream_options: { include_usage: true } });
    let text = "";
    const finishes: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("text_completion");
      for (const choice of chunk.choices) {
        text += choice.text;
        if (choice.finish_reason) finishes.push(choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(finishes).toEqual(["length"]);
    expect(usage).toMatchObject({ completion_tokens: 6 });
  });

  it("streams an echo with logprobs, and ends with [DONE]", async () => {
    const response = await fetch(`${server.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.app.keys.alice}`, "content-type": "application/json" },
      body: JSON.stringify({ ...base, prompt: "Echo me", echo: true, logprobs: 0, stream: true }),
    });
    const events = await readSse(response);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1) as unknown as { choices: LegacyChoice[] }[];
    expect(chunks[0]!.choices[0]!.text).toBe("Echo me");
    expect(chunks[0]!.choices[0]!.logprobs!.token_logprobs[0]).toBeNull();
  });

  it("applies structured outputs like chat: a choice constraint", async () => {
    const completion = await server.client.completions.create({ ...base, max_tokens: 20, ignore_eos: false, prompt: "Pick:", structured_outputs: { choice: ["alpha", "beta"] } } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(["alpha", "beta"]).toContain(completion.choices[0]!.text);
  });

  it("refuses what vLLM refuses, in the OpenAI error shape the SDK reads", async () => {
    const suffix = await server.client.completions.create({ ...base, prompt: "x", suffix: "y" }).catch((error: unknown) => error);
    expect(suffix).toBeInstanceOf(OpenAI.BadRequestError);
    expect((suffix as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("suffix is not currently supported");
    const outside = await server.client.completions.create({ ...base, prompt: [10_000_000] }).catch((error: unknown) => error);
    expect(outside).toBeInstanceOf(OpenAI.BadRequestError);
    const temperature = await server.client.completions.create({ ...base, prompt: "x", temperature: 3 }).catch((error: unknown) => error);
    expect((temperature as Error).message).toContain("temperature must be in [0, 2], got 3.0.");
    const unknown = await server.client.completions.create({ ...base, model: "nope", prompt: "x" }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    const missing = await server.client.completions.create({ ...base, prompt: [] as string[] }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const anonymous = await fetch(`${server.baseURL}/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...base, prompt: "x" }) });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { type: "AuthenticationError" } });
  });

  it("is documented in /openapi.json", async () => {
    const document = (await (await fetch(`${server.baseURL.replace(/\/v1$/, "")}/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    expect(document.paths["/v1/completions"]?.post?.requestBody).toBeDefined();
  });
});
