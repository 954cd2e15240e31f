import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { Config } from "../config.js";
import type { ModelCatalog } from "../engine/catalog.js";
import type { BlobStore } from "../store/blobs.js";
import type { Store } from "../store/db.js";
import { requireApiKey } from "./auth.js";
import type { ChatEngines } from "./chat/pipeline/engines.js";
import { chatModelCaller } from "./chat/completions/model-caller.js";
import { chatRoutes, rootChatRoutes } from "./chat/index.js";
import { createChatRouting } from "./chat/routing.js";
import { type ErrorStyle, installErrorHandler } from "./errors.js";
import { installJsonBodyParser } from "./json-body.js";
import { installMethodNotAllowed } from "./method-not-allowed.js";
import { RequestLogController } from "./request-log.js";
import { RouteCatalog } from "./routes.js";
import { serviceRoutes } from "./service/routes.js";
import { traceRoutes } from "./trace/index.js";
import { trainingRoutes } from "./training/index.js";
import { uiRoutes } from "./ui/routes.js";
import { workerRoutes } from "./workers/index.js";

/** What the HTTP layer needs from the layers below it. */
export interface AppServices {
  config: Config;
  store: Store;
  blobs: BlobStore;
  catalog: ModelCatalog;
  /** The inference engines behind /v1/chat/completions; without them the endpoint answers 503. */
  engines?: ChatEngines;
  /** Called after a training job is queued, so an in-process worker can start it without waiting for its next poll. */
  onJobQueued?: () => void;
}

declare module "fastify" {
  interface FastifyInstance {
    services: AppServices;
  }
}

export interface BuildAppOptions {
  /** pino options, or false for no logs (tests). */
  logger?: FastifyServerOptions["logger"];
  /** The built web UI (default: dist/ui of this package). */
  uiDir?: string;
  /** Parse every successful answer with its route's documented schema; a mismatch is a 500 (the tests turn it on). */
  checkResponses?: boolean;
}

export async function buildApp(services: AppServices, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new RequestLogController(),
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorate("services", services);
  app.decorate("routeCatalog", new RouteCatalog(options.checkResponses));
  // Only JSON is accepted by default; surfaces that take other media types add parsers in their scope.
  app.removeContentTypeParser("text/plain");
  installJsonBodyParser(app);

  const styleForUrl = (url: string): ErrorStyle => (url.startsWith(config.traceBasePath) ? "trace" : url.startsWith("/v1/chat") ? "openai" : "detail");
  installErrorHandler(app, styleForUrl);
  installMethodNotAllowed(app, styleForUrl);

  await app.register(serviceRoutes);
  const chatRouting = createChatRouting(config);
  await app.register(
    async (v1) => {
      v1.addHook("onRequest", requireApiKey(services.store, "detail", ["bearer"]));
      await v1.register(trainingRoutes);
      await v1.register(chatRoutes, { routing: chatRouting });
    },
    { prefix: "/v1" },
  );
  await app.register(async (root) => {
    root.addHook("onRequest", requireApiKey(services.store, "openai", ["bearer"]));
    await root.register(rootChatRoutes, { routing: chatRouting });
  });
  await app.register(workerRoutes, { prefix: "/v1/worker" });
  // Server-run evaluations call models through the chat pipeline, wired here so neither surface imports the other.
  await app.register(traceRoutes, { prefix: config.traceBasePath, models: chatModelCaller(app) });
  await app.register(uiRoutes, { uiDir: options.uiDir });
  return app;
}
