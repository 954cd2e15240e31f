import type { FastifyReply, FastifyRequest } from "fastify";
import { TurnBudget } from "../../../store/event-loop-turns.js";

/**
 * Streams rows as JSON Lines (`docs/api/trace.md#json-lines`): one object per line, the media type taken from
 * the request's Accept header (default application/jsonl). Rows are written as they come, so a
 * large result never sits in memory whole, and the event loop is handed back every few
 * milliseconds. `serialize` renders one row (JSON.stringify by default).
 * An error after the first byte can no longer become an error response, so it ends the connection
 * (as does a row that does not match the route's documented `stream` schema, when the app checks answers).
 */
export async function sendJsonLines(request: FastifyRequest, reply: FastifyReply, rows: AsyncIterable<unknown> | Iterable<unknown>, serialize: (row: unknown) => string = JSON.stringify): Promise<FastifyReply> {
  const accept = request.headers.accept;
  const mediaType = accept && accept !== "*/*" && !accept.includes(",") ? accept : "application/jsonl";
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": mediaType });
  const turns = new TurnBudget();
  const check = request.routeOptions.config.checkStreamItem;
  try {
    for await (const row of rows) {
      await turns.spend();
      const line = serialize(row);
      // The check reads the line as a client will (rows may hold spliced JSON text).
      check?.(JSON.parse(line));
      if (!raw.write(`${line}\n`)) await new Promise((resolve) => raw.once("drain", resolve));
    }
    raw.end();
  } catch (error) {
    request.log.error({ err: error }, "stream failed after its first byte");
    raw.destroy(error as Error);
  }
  return reply;
}
