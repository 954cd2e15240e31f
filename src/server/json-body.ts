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
 * route's `prescan` sees the text before it is parsed.
 */
export function installJsonBodyParser(app: FastifyInstance, options: JsonBodyOptions = {}): void {
  const { parse, refine } = options;
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
    const prescan = request.routeOptions.config?.prescan;
    if (prescan) {
      prescan(text).then(
        () => parseRefined(request, text, done),
        (error: unknown) => done(error as Error),
      );
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
