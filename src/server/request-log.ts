import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

/**
 * One structured line per request (the child logger adds `reqId`): method, route, status and
 * latency. Never headers or bodies, so keys and prompts stay out of the logs.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? "(unmatched)",
      status: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) reply.log.error({ ...line, err: error.message }, "request");
    else reply.log.info(line, "request");
  }
}
