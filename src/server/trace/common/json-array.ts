import type { FastifyReply, FastifyRequest } from "fastify";
import { TurnBudget } from "../../../store/event-loop-turns.js";

/**
 * Sends `{"<key>": [row, row, …]}` as rows come, page by page, so a large result never sits in
 * memory whole (as a body string or as objects), handing the event loop back every few milliseconds. The caller reads the first page before calling,
 * so a bad query still gets a normal error; an error after the first byte ends the connection.
 */
export async function sendJsonArrayObject(request: FastifyRequest, reply: FastifyReply, key: string, pages: AsyncIterable<readonly unknown[]>, serialize: (row: unknown) => string = JSON.stringify): Promise<FastifyReply> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": "application/json; charset=utf-8" });
  const write = async (text: string) => {
    if (!raw.write(text)) await new Promise((resolve) => raw.once("drain", resolve));
  };
  try {
    await write(`{${JSON.stringify(key)}:[`);
    let separator = "";
    const turns = new TurnBudget();
    const check = request.routeOptions.config.checkAnswer;
    for await (const page of pages) {
      const texts: string[] = [];
      for (const row of page) {
        await turns.spend();
        texts.push(serialize(row));
      }
      const chunk = texts.join(",");
      // The check reads the page as a client will (rows may hold spliced JSON text).
      check?.({ [key]: JSON.parse(`[${chunk}]`) });
      if (chunk === "") continue;
      await write(separator + chunk);
      separator = ",";
    }
    raw.end("]}");
  } catch (error) {
    request.log.error({ err: error }, "response failed after its first byte");
    raw.destroy(error as Error);
  }
  return reply;
}
