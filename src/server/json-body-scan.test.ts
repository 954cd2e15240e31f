import http from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installJsonBodyParser } from "./json-body.js";

/** A POST whose body goes out in `pieces`, a few milliseconds apart; resolves with the answer. */
function postInPieces(url: string, pieces: string[]): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const length = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": length } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    const send = async () => {
      for (const piece of pieces) {
        req.write(piece);
        await new Promise((done) => setTimeout(done, 5));
      }
      req.end();
    };
    void send();
  });
}

/**
 * A route's `prescan` sees the body while it is uploaded: the counting happens chunk by chunk, a
 * body past the limit is answered with the scan's error once it has all arrived (never a reset
 * mid-upload), and such a body is never parsed.
 */
describe("a route's prescan on the uploaded body", () => {
  let app: FastifyInstance;
  let url: string;
  const events: string[] = [];
  beforeAll(async () => {
    app = Fastify();
    installJsonBodyParser(app, {
      parse: (text) => {
        events.push("parsed");
        return JSON.parse(text);
      },
    });
    app.route({
      method: "POST",
      url: "/count",
      config: {
        prescan: () => {
          let commas = 0;
          return {
            feed(chunk: string) {
              events.push(`fed ${chunk.length}`);
              commas += chunk.split(",").length - 1;
            },
            end() {
              if (commas >= 3) throw Object.assign(new Error(`more than 3 items (${commas} commas)`), { statusCode: 400 });
            },
          };
        },
      },
      handler: async (request) => ({ items: (request.body as { items: unknown[] }).items.length }),
    });
    url = `${await app.listen({ host: "127.0.0.1", port: 0 })}/count`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("feeds the text as it arrives and lets a body within the limit through to the parser", async () => {
    events.length = 0;
    const answer = await postInPieces(url, ['{"items": [', "1, ", "2", "]}"]);
    expect(answer).toEqual({ status: 200, text: '{"items":2}' });
    expect(events.filter((event) => event.startsWith("fed")).length).toBeGreaterThan(1);
    expect(events.at(-1)).toBe("parsed");
  });

  it("answers the scan's error, on the whole body, after the whole upload, without parsing the body", async () => {
    events.length = 0;
    const answer = await postInPieces(url, ['{"items": [', "1, 2, 3, 4", ", 5".repeat(10_000), "]}"]);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ message: "more than 3 items (10003 commas)" });
    expect(events).not.toContain("parsed");
    expect(events.filter((event) => event.startsWith("fed")).length).toBeGreaterThan(1);
  });
});
