import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatServer, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";

/**
 * POST /tokenize and /detokenize as vLLM answers them, on a real model's tokenizer: a prompt, chat
 * messages rendered exactly as chat completions render them (the ids equal the chat response's
 * prompt_token_ids), token strings, the round trip, and errors in the OpenAI shape.
 */
describe("POST /tokenize and /detokenize", () => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let tokenizer: Tokenizer;
  let root: string;

  const post = async (path: string, body: unknown, key: string | null = server.app.keys.alice) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    const response = await fetch(`${root}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    server = await startChatServer("sqlite", { servedModels: { "test/tiny": model.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
    root = server.baseURL.replace(/\/v1$/, "");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("tokenizes a prompt, with token strings when asked", async () => {
    const { status, body } = await post("/tokenize", { model: "test/tiny", prompt: "Hello world", return_token_strs: true });
    expect(status).toBe(200);
    const expected = tokenizer.encode("Hello world", { addSpecialTokens: true });
    expect(body).toEqual({ count: expected.length, max_model_len: expect.any(Number), tokens: expected, token_strs: expected.map((id) => tokenizer.tokenString(id)) });
    const plain = await post("/tokenize", { model: "test/tiny", prompt: "Hello world", add_special_tokens: false });
    expect(plain.body.token_strs).toBeNull();
    expect(plain.body.tokens).toEqual(tokenizer.encode("Hello world", { addSpecialTokens: false }));
  });

  it("tokenizes chat messages to exactly the prompt chat completions run", async () => {
    const messages: { role: "system" | "user"; content: string }[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi there" },
    ];
    const chat = await server.create({ model: "test/tiny", messages, max_completion_tokens: 1, return_token_ids: true });
    const { body } = await post("/tokenize", { model: "test/tiny", messages });
    expect(body.tokens).toEqual(chat.prompt_token_ids);
    const open = await post("/tokenize", { model: "test/tiny", messages, add_generation_prompt: false });
    expect((open.body.tokens as number[]).length).toBeLessThan((body.tokens as number[]).length);
  });

  it("detokenizes, the round trip of tokenize", async () => {
    const { body } = await post("/tokenize", { model: "test/tiny", prompt: "Round trip ✓", add_special_tokens: false });
    const back = await post("/detokenize", { model: "test/tiny", tokens: body.tokens });
    expect(back).toEqual({ status: 200, body: { prompt: "Round trip ✓" } });
  });

  it("answers errors in the OpenAI shape and needs the key", async () => {
    const outside = await post("/detokenize", { model: "test/tiny", tokens: [10_000_000] });
    expect(outside.status).toBe(400);
    expect(outside.body).toMatchObject({ error: { type: "BadRequestError", param: "tokens" } });
    const unknown = await post("/tokenize", { model: "nope", prompt: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { type: "NotFoundError" } });
    const invalid = await post("/detokenize", { model: "test/tiny", tokens: "abc" });
    expect(invalid.status).toBe(422);
    const anonymous = await post("/tokenize", { prompt: "x" }, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error: { type: "AuthenticationError" } });
  });

  it("is documented in /openapi.json", async () => {
    const document = (await (await fetch(`${root}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(document.paths["/tokenize"]).toBeDefined();
    expect(document.paths["/detokenize"]).toBeDefined();
  });
});
