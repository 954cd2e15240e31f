import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";

interface Operation {
  tags: string[];
  responses: { "200": { content?: Record<string, { schema: { properties?: Record<string, { const?: unknown }>; anyOf?: unknown[]; oneOf?: unknown[] } }> } };
}

/**
 * Every JSON answer of the inference surface is documented in /openapi.json from its endpoint's
 * protocol, and every endpoint that streams documents its events too (the LoRA routes answer
 * plain text, and say so).
 */
describe("the inference surface in /openapi.json", () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  beforeAll(async () => {
    t = await startTestApp("sqlite");
    paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths;
  });
  afterAll(async () => {
    await t.close();
  });

  const contentOf = (path: string, method: string) => paths[path]![method]!.responses["200"].content ?? {};

  it("documents each JSON answer", () => {
    const objects: [string, string, string, unknown][] = [
      ["/v1/chat/completions", "post", "object", "chat.completion"],
      ["/v1/completions", "post", "object", "text_completion"],
      ["/v1/responses", "post", "object", "response"],
      ["/v1/responses/{response_id}", "get", "object", "response"],
      ["/v1/responses/{response_id}", "delete", "deleted", true],
      ["/v1/messages", "post", "type", "message"],
      ["/v1/models", "get", "object", "list"],
    ];
    for (const [path, method, field, value] of objects) expect(contentOf(path, method)["application/json"]?.schema.properties?.[field]?.const, `${method} ${path}`).toBe(value);
    expect(Object.keys(contentOf("/tokenize", "post")["application/json"]!.schema.properties!)).toEqual(["count", "max_model_len", "tokens", "token_strs"]);
    expect(Object.keys(contentOf("/detokenize", "post")["application/json"]!.schema.properties!)).toEqual(["prompt"]);
  });

  it("documents each stream's events", () => {
    expect(contentOf("/v1/chat/completions", "post")["text/event-stream"]?.schema.properties?.object?.const).toBe("chat.completion.chunk");
    expect(contentOf("/v1/completions", "post")["text/event-stream"]?.schema.properties?.object?.const).toBe("text_completion");
    for (const path of ["/v1/responses", "/v1/messages"]) {
      const events = contentOf(path, "post")["text/event-stream"]?.schema;
      expect((events?.anyOf ?? events?.oneOf)?.length, path).toBeGreaterThan(5);
    }
  });

  it("leaves no inference route without a documented answer", () => {
    const chat = Object.entries(paths).flatMap(([path, operations]) => Object.entries(operations).flatMap(([method, operation]) => (operation.tags.includes("chat") ? [{ route: `${method} ${path}`, operation }] : [])));
    expect(chat.length).toBeGreaterThanOrEqual(11);
    const undocumented = chat.filter(({ operation }) => !operation.responses["200"].content).map(({ route }) => route);
    expect(undocumented).toEqual([]);
    for (const path of ["/v1/load_lora_adapter", "/v1/unload_lora_adapter"]) expect(Object.keys(contentOf(path, "post")), path).toEqual(["text/plain"]);
  });
});
