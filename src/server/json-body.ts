import { StringDecoder } from "node:string_decoder";
import { pipeline, Transform } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";

type Done = (error: Error | null, body?: unknown) => void;
type JsonParser = (request: FastifyRequest, text: string, done: Done) => void;

export interface JsonBodyOptions {
  /** Parses the text instead of Fastify's own parser (which is secure against prototype poisoning). */
  parse?: (text: string) => unknown;
  /** Adjusts the parsed body, with the text it came from at hand. */
  refine?: (body: unknown, text: string) => unknown;
}

/**
 * Installs the `application/json` body parser of a scope. An empty or all-whitespace body is no
 * body at all, as if no content type had been sent: HTTP clients such as openai-python set
 * `Content-Type: application/json` on every request that may carry a body, a body-less DELETE
 * included. Routes that require a body still answer 422 "Field required" from their schema. A
 * route's `prescan` sees the text as it is uploaded, before it is parsed (`scanWhileUploaded`).
 */
export function installJsonBodyParser(app: FastifyInstance, options: JsonBodyOptions = {}): void {
  const { parse, refine } = options;
  scanWhileUploaded(app);
  const parseText: JsonParser = parse
    ? (_request, text, done) => {
        try {
          done(null, parse(text));
        } catch (error) {
          done(error as Error);
        }
      }
    : (app.getDefaultJsonParser("error", "error") as unknown as JsonParser);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    parseRefined(request, text, done);
  });

  function parseRefined(request: FastifyRequest, text: string, done: Done): void {
    if (!refine) {
      parseText(request, text, done);
      return;
    }
    parseText(request, text, (error, parsed) => {
      if (error) return done(error);
      try {
        done(null, refine(parsed, text));
      } catch (refineError) {
        done(refineError as Error);
      }
    });
  }
}

/** Requests whose body is already being scanned (a scope's hook and its parent's both see them). */
const scanned = new WeakSet<FastifyRequest>();

/**
 * Feeds a route's `prescan` the body's text chunk by chunk as it arrives, so the check never waits
 * for the whole body nor holds the loop for more than a chunk. Once the scan refuses the body, the
 * rest is still read and scanned (so the error tells the whole body's counts) but no longer kept,
 * and the route answers that error when the upload ends: a client gets its 400, not a connection
 * reset mid-upload, and the body is never joined, decoded or parsed.
 */
function scanWhileUploaded(app: FastifyInstance): void {
  app.addHook("preParsing", async (request, _reply, payload) => {
    const prescan = request.routeOptions.config?.prescan;
    if (!prescan || scanned.has(request)) return payload;
    scanned.add(request);
    const scan = prescan();
    const decoder = new StringDecoder("utf8");
    let refused = false;
    const check = (): Error | null => {
      try {
        scan.end();
        return null;
      } catch (error) {
        return error as Error;
      }
    };
    const scanning = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        scan.feed(decoder.write(chunk));
        refused ||= check() !== null;
        callback(null, refused ? undefined : chunk);
      },
      flush(callback) {
        scan.feed(decoder.end());
        callback(check());
      },
    });
    // pipeline, not pipe: an aborted upload destroys the scanning stream too, so the body reader sees it.
    return pipeline(payload, scanning, () => undefined);
  });
}
