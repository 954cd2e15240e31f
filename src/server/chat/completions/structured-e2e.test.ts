import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatParams, type ChatServer, chunksOf, readSse, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

/**
 * Structured outputs end to end (`docs/api/chat.md#structured-outputs`): every constraint kind through the OpenAI SDK
 * on a real engine with xgrammar, and the output checked against the constraint itself. A random
 * model wanders, so some tests steer it with logit_bias (whitespace banned, closing tokens
 * favoured); the grammar still decides what is allowed at every step.
 */
describe.each(testDialects)("structured outputs end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let tokenizer: Tokenizer;
  /** logit_bias entries that ban every token made only of whitespace. */
  let noWhitespace: Record<string, number>;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "Answer in the requested format." }],
    temperature: 0,
    repetition_penalty: 1,
    max_completion_tokens: 64,
    ...fields,
  });
  const tokenOf = (text: string) => {
    const ids = tokenizer.encode(text);
    if (ids.length !== 1) throw new Error(`'${text}' is not one token`);
    return ids[0]!;
  };

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
    noWhitespace = {};
    for (let id = 0; id < tokenizer.vocabSize; id++) if (/^\s+$/.test(tokenizer.decode([id], { skipSpecialTokens: false }))) noWhitespace[id] = -100;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("produces a document valid for a JSON schema, given as response_format or structured_outputs.json", async () => {
    const schema = {
      type: "object",
      properties: { n: { type: "integer", minimum: 1, maximum: 99 }, tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, maxItems: 3 } },
      required: ["n", "tags"],
      additionalProperties: false,
    };
    const validate = new Ajv().compile(schema);
    const viaFormat = await server.create(params({ response_format: { type: "json_schema", json_schema: { name: "doc", schema, strict: true } }, logit_bias: noWhitespace }));
    expect(viaFormat.choices[0]!.finish_reason).toBe("stop");
    const document = JSON.parse(viaFormat.choices[0]!.message.content!);
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    const viaOutputs = await server.create(params({ structured_outputs: { json: JSON.stringify(schema) }, logit_bias: noWhitespace }));
    expect(viaOutputs.choices[0]!.message.content).toBe(viaFormat.choices[0]!.message.content);
  });

  it("produces a JSON object for json_object", async () => {
    const steer = { ...noWhitespace, [tokenOf('"')]: 8, [tokenOf(":")]: 8 };
    for (const fields of [{ response_format: { type: "json_object" } }, { structured_outputs: { json_object: true } }]) {
      const completion = await server.create(params({ ...fields, logit_bias: steer }));
      expect(completion.choices[0]!.finish_reason).toBe("stop");
      const value = JSON.parse(completion.choices[0]!.message.content!) as unknown;
      expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it("matches a regex, picks one choice, and follows EBNF and Lark grammars", async () => {
    const regex = await server.create(params({ structured_outputs: { regex: "[A-Z][a-z]{2,6} [0-9]{1,3}" } }));
    expect(regex.choices[0]!.message.content).toMatch(/^[A-Z][a-z]{2,6} [0-9]{1,3}$/);
    const choice = await server.create(params({ structured_outputs: { choice: ["red", "green", "blue"] }, temperature: 1, seed: 4, n: 4 }));
    for (const option of choice.choices) expect(["red", "green", "blue"]).toContain(option.message.content);
    const ebnf = await server.create(params({ structured_outputs: { grammar: 'root ::= "(" item ("," item)* ")"\nitem ::= [a-c]+' } }));
    expect(ebnf.choices[0]!.message.content).toMatch(/^\([a-c]+(,[a-c]+)*\)$/);
    const lark = await server.create(params({ structured_outputs: { grammar: 'start: "<" WORD ">"\nWORD: "yes" | "no"' } }));
    expect(["<yes>", "<no>"]).toContain(lark.choices[0]!.message.content);
    for (const completion of [regex, ebnf, lark]) expect(completion.choices[0]!.finish_reason).toBe("stop");
  });

  it("encloses a JSON value in a structural tag", async () => {
    const format = { type: "tag", begin: "<a>", content: { type: "json_schema", json_schema: { type: "object", properties: { x: { type: "boolean" } }, required: ["x"] } }, end: "</a>" };
    const completion = await server.create(params({ response_format: { type: "structural_tag", format }, logit_bias: noWhitespace }));
    const content = completion.choices[0]!.message.content!;
    expect(content).toMatch(/^<a>.*<\/a>$/s);
    expect(typeof (JSON.parse(content.slice(3, -4)) as { x: unknown }).x).toBe("boolean");
  });

  it("streams constrained output as the same text", async () => {
    const fields = params({ structured_outputs: { regex: "[A-Z][a-z]{2,6} [0-9]{1,3}" } });
    const whole = await server.create(fields);
    const chunks = chunksOf(await readSse(await server.post({ ...fields, stream: true })));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(whole.choices[0]!.message.content);
  });

  it("refuses constraints that cannot compile with a 400, before any stream starts", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ structured_outputs: { regex: "(" } }, "Failed to transform regex into a grammar"],
      [{ structured_outputs: { grammar: "root ::= missing" } }, "Invalid grammar specification."],
      // Left recursion: xgrammar compiles it, but no string can ever complete it.
      [{ structured_outputs: { grammar: "root ::= root root" } }, "Invalid grammar specification."],
      [{ structured_outputs: { grammar: 'root ::= root "a"' } }, "Invalid grammar specification."],
      [{ structured_outputs: { json: "{not json" } }, "Failed to transform json schema into a grammar"],
      [{ structured_outputs: { choice: [] } }, "Choice '[]' cannot be an empty list"],
      [{ structured_outputs: { regex: "a", choice: ["a"] } }, "You can only use one kind of constraints for structured outputs"],
      [{ response_format: { type: "json_object" }, structured_outputs: { regex: "a" } }, "You can only use one kind of structured outputs constraint but multiple are specified"],
    ];
    for (const [fields, message] of cases) {
      await expect(server.client.chat.completions.create(params(fields)), JSON.stringify(fields)).rejects.toMatchObject({ status: 400, message: expect.stringContaining(message) });
      const stream = await server.post({ ...params(fields), stream: true });
      expect(stream.status, JSON.stringify(fields)).toBe(400);
      expect(((await stream.json()) as { error: { message: string } }).error.message).toContain(message);
    }
  });
});
