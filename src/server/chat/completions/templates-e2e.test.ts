import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatParams, type ChatServer, type Completion, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";
import { makeTempDir, testDialects } from "../../../testing/stores.js";

/** A copy of a model directory whose tokenizer_config.json has another `chat_template` (undefined removes it). */
function withChatTemplate(sourceDir: string, chatTemplate: unknown): string {
  const dir = makeTempDir("flywheel-template-model-");
  fs.cpSync(sourceDir, dir, { recursive: true });
  const file = path.join(dir, "tokenizer_config.json");
  const config = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  if (chatTemplate === undefined) delete config.chat_template;
  else config.chat_template = chatTemplate;
  fs.writeFileSync(file, JSON.stringify(config));
  return dir;
}

const PLAIN = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[bot] {% endif %}";
const TOOL_USE = `{% if tools is not none %}{% for t in tools %}(tool {{ t.function.name }})\n{% endfor %}{% endif %}${PLAIN}`;

/**
 * Chat templates end to end (`docs/api/chat.md#chat-templates`): the model's template or the request's, template
 * variables (chat_template_kwargs, documents, reasoning_effort), content given as parts, custom
 * roles, named templates (`tool_use` when tools are sent), and a model without any template — the
 * rendered prompt read back through `prompt_token_ids`.
 */
describe.each(testDialects)("chat templates end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  const copies: string[] = [];
  let server: ChatServer;
  let tokenizer: Tokenizer;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "Hi there" }],
    temperature: 0,
    max_completion_tokens: 2,
    ignore_eos: true,
    return_token_ids: true,
    ...fields,
  });
  const prompt = (completion: Completion) => tokenizer.decode(completion.prompt_token_ids!, { skipSpecialTokens: false });
  const render = async (fields: Record<string, unknown>) => prompt(await server.create(params(fields)));

  beforeAll(async () => {
    copies.push(
      withChatTemplate(model.dir, undefined),
      withChatTemplate(model.dir, [
        { name: "default", template: PLAIN },
        { name: "tool_use", template: TOOL_USE },
      ]),
    );
    // These tests send their own templates, which only a server that trusts them renders.
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir, "test/bare": copies[0]!, "test/named": copies[1]! }, env: { FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE: "1" } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
  });
  afterAll(async () => {
    await server?.close();
    for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("renders the model's template, or the request's own", async () => {
    expect(await render({})).toBe("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
    expect(await render({ chat_template: PLAIN })).toBe("[user] Hi there\n[bot] ");
    expect(await render({ chat_template: PLAIN, add_generation_prompt: false })).toBe("[user] Hi there\n");
  });

  it("passes chat_template_kwargs, documents and reasoning_effort to the template, explicit fields first", async () => {
    const template = "{{ greeting }}|{% for d in documents %}<{{ d.title }}:{{ d.text }}>{% endfor %}|{{ reasoning_effort }}|{{ enable_thinking }}|{{ add_generation_prompt }}";
    const fields = {
      chat_template: template,
      documents: [
        { title: "A", text: "alpha" },
        { title: "B", text: "beta" },
      ],
      reasoning_effort: "low",
    };
    expect(await render({ ...fields, chat_template_kwargs: { greeting: "Howdy", add_generation_prompt: false } })).toBe("Howdy|<A:alpha><B:beta>|low|true|true");
    expect(await render({ ...fields, reasoning_effort: "none", chat_template_kwargs: { greeting: "Hey" } })).toBe("Hey|<A:alpha><B:beta>|none|false|true");
    expect(await render({ ...fields, chat_template_kwargs: { greeting: "Yo", enable_thinking: false } })).toBe("Yo|<A:alpha><B:beta>|low|false|true");
    // The fixture's own template opens an empty think block when thinking is off.
    expect((await render({ reasoning_effort: "none" })).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
    expect((await render({ reasoning_effort: "high" })).endsWith("<|im_start|>assistant\n")).toBe(true);
    await expect(server.client.chat.completions.create(params({ chat_template_kwargs: { tokenize: true } }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Found unexpected chat template kwargs from request"),
    });
  });

  it("renders content given as parts like the joined string, or as parts for templates that loop over them", async () => {
    const parts = [
      { type: "text", text: "Hi" },
      { type: "text", text: "there" },
    ];
    const asParts = await server.create(params({ messages: [{ role: "user", content: parts }] }));
    const asString = await server.create(params({ messages: [{ role: "user", content: "Hi\nthere" }] }));
    expect(asParts.prompt_token_ids).toEqual(asString.prompt_token_ids);
    expect(asParts.choices[0]!.token_ids).toEqual(asString.choices[0]!.token_ids);
    const looping = "{% for m in messages %}{% for part in m['content'] %}({{ part.text }}){% endfor %}{% endfor %}";
    expect(await render({ chat_template: looping, messages: [{ role: "user", content: parts }] })).toBe("(Hi)(there)");
    expect(await render({ chat_template: looping, messages: [{ role: "user", content: "whole" }] })).toBe("(whole)");
    await expect(server.client.chat.completions.create(params({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://x/y.png" } }] }] }))).rejects.toMatchObject({ status: 400 });
  });

  it("passes custom roles to the template, and answers as the last role without a generation prompt", async () => {
    const messages = [
      { role: "narrator", content: "Night fell." },
      { role: "user", content: "And then?" },
      { role: "narrator", content: "The moon" },
    ];
    const completion = await server.create(params({ chat_template: PLAIN, messages, add_generation_prompt: false }));
    expect(prompt(completion)).toBe("[narrator] Night fell.\n[user] And then?\n[narrator] The moon\n");
    expect(completion.choices[0]!.message.role).toBe("narrator");
    // The fixture's ChatML template refuses roles it does not know, with its own message.
    await expect(server.client.chat.completions.create(params({ messages }))).rejects.toMatchObject({ status: 400, message: "400 Unexpected message role: narrator" });
  });

  it("answers a model without a chat template with the 400 of docs/api/chat.md#chat-templates, unless the request brings one", async () => {
    const error = await server.client.chat.completions.create(params({ model: "test/bare" })).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 400,
      error: { message: "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.", type: "BadRequestError", code: 400 },
    });
    const stream = await server.post({ ...params({ model: "test/bare" }), stream: true });
    expect(stream.status).toBe(400);
    expect(stream.headers.get("content-type")).toMatch(/application\/json/);
    const completion = await server.create(params({ model: "test/bare", chat_template: PLAIN }));
    expect(prompt(completion)).toBe("[user] Hi there\n[bot] ");
  });

  it("uses the model's tool_use template when tools are sent, and named templates by name", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
    expect(await render({ model: "test/named" })).toBe("[user] Hi there\n[bot] ");
    expect(await render({ model: "test/named", tools, tool_choice: "none" })).toBe("(tool get_weather)\n[user] Hi there\n[bot] ");
    expect(await render({ model: "test/named", tools, tool_choice: { type: "function", function: { name: "get_weather" } }, max_completion_tokens: 8, ignore_eos: false })).toBe("(tool get_weather)\n[user] Hi there\n[bot] ");
    expect(await render({ model: "test/named", chat_template: "tool_use" })).toBe("[user] Hi there\n[bot] ");
    expect(await render({ model: "test/named", chat_template: "tool_use", tools, tool_choice: "none" })).toBe("(tool get_weather)\n[user] Hi there\n[bot] ");
  });
});
