import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { installErrorHandler } from "./errors.js";
import { buildOpenApiDocument, defineRoute, RouteCatalog } from "./routes.js";
import { sendJsonLines } from "./trace/common/json-lines.js";

const Answer = z.object({ id: z.string(), count: z.int() });

async function appWith(checkResponses: boolean, answer: unknown): Promise<FastifyInstance> {
  const app = Fastify();
  app.decorate("routeCatalog", new RouteCatalog(checkResponses));
  installErrorHandler(app, () => "detail");
  defineRoute(app, { method: "GET", url: "/thing", summary: "A thing", response: Answer }, async () => answer);
  defineRoute(app, { method: "GET", url: "/sent", summary: "A thing sent by hand", response: Answer }, async (_input, _request, reply) => reply.code(200).send(answer));
  defineRoute(app, { method: "GET", url: "/missing", summary: "An error", response: Answer }, async (_input, _request, reply) => reply.code(404).send({ detail: "no such thing" }));
  defineRoute(app, { method: "GET", url: "/lines", summary: "Lines", stream: Answer, streamFormat: "jsonl" }, async (_input, request, reply) => sendJsonLines(request, reply, [{ id: "a", count: 1 }, answer]));
  defineRoute(app, { method: "GET", url: "/bytes", summary: "Bytes", rawResponse: { mediaType: "application/octet-stream", description: "The file's bytes" } }, async (_input, _request, reply) =>
    reply.type("application/octet-stream").send(Buffer.from("abc")),
  );
  await app.ready();
  return app;
}

describe("defineRoute's answer checks", () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it("lets an answer that matches its schema through unchanged", async () => {
    app = await appWith(true, { id: "x", count: 2 });
    for (const url of ["/thing", "/sent"]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: "x", count: 2 });
    }
    expect((await app.inject({ method: "GET", url: "/lines" })).body).toBe('{"id":"a","count":1}\n{"id":"x","count":2}\n');
  });

  it("turns an answer that does not match into a 500 that names the difference", async () => {
    app = await appWith(true, { id: "x", count: "2" });
    for (const url of ["/thing", "/sent"]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(500);
      expect(res.json().detail).toContain(`GET ${url} does not match its documented schema`);
      expect(res.json().detail).toContain("count");
    }
  });

  it("breaks off a JSON Lines stream at the first line that does not match", async () => {
    app = await appWith(true, { id: 3 });
    const res = await app.inject({ method: "GET", url: "/lines" }).catch((error: Error) => error);
    // The first line went out; the bad one never does (the connection is ended instead).
    if (res instanceof Error) expect(res.message).toMatch(/schema/);
    else expect(res.body).toBe('{"id":"a","count":1}\n');
  });

  it("leaves error answers and non-JSON answers alone", async () => {
    app = await appWith(true, { id: "x", count: 2 });
    expect((await app.inject({ method: "GET", url: "/missing" })).statusCode).toBe(404);
    expect((await app.inject({ method: "GET", url: "/bytes" })).body).toBe("abc");
  });

  it("checks nothing unless asked", async () => {
    app = await appWith(false, { id: "x", count: "2" });
    expect((await app.inject({ method: "GET", url: "/thing" })).json()).toEqual({ id: "x", count: "2" });
  });

  it("documents JSON Lines items and non-JSON answers under their media types", async () => {
    app = await appWith(false, {});
    const paths = buildOpenApiDocument(app.routeCatalog, { title: "t", version: "0" }).paths as Record<string, Record<string, { responses: { "200": { content: Record<string, { schema: Record<string, unknown> }> } } }>>;
    expect(Object.keys(paths["/lines"]!.get!.responses["200"].content)).toEqual(["application/jsonl"]);
    expect(paths["/lines"]!.get!.responses["200"].content["application/jsonl"]!.schema.required).toEqual(["id", "count"]);
    expect(paths["/bytes"]!.get!.responses["200"].content["application/octet-stream"]!.schema.description).toBe("The file's bytes");
  });
});
