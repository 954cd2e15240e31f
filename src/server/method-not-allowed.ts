import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { type ErrorStyle, sendError } from "./errors.js";

const METHODS: HTTPMethod[] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/**
 * Fastify answers every unmatched request with 404. A mirror of the route table tells a path that
 * exists under another method (405 with `Allow`) from one that does not exist at all (404). The
 * answer is given before the body is read, so an unmatched request's content type or body (empty,
 * malformed, of an unsupported type) never turns it into a 415 or 422.
 */
export function installMethodNotAllowed(app: FastifyInstance, styleForUrl: (url: string) => ErrorStyle): void {
  const mirror = FindMyWay({ ignoreTrailingSlash: true });
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod) && !mirror.hasRoute(method as HTTPMethod, route.url)) {
        mirror.on(method as HTTPMethod, route.url, () => {});
      }
    }
  });
  const answerUnmatched = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split("?")[0] ?? request.url;
    const allowed = METHODS.filter((method) => mirror.find(method, path) !== null);
    const style = styleForUrl(request.url);
    if (allowed.length > 0) {
      return sendError(reply, style, 405, "Method Not Allowed", { headers: { allow: allowed.join(", ") } });
    }
    return sendError(reply, style, 404, "Not Found");
  };
  app.addHook("onRequest", async (request, reply) => {
    if (request.is404) return answerUnmatched(request, reply);
  });
  app.setNotFoundHandler(answerUnmatched);
}
