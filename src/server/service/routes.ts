import os from "node:os";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { flywheelVersion } from "../../version.js";
import { requireApiKey } from "../auth.js";
import { buildOpenApiDocument, defineRoute } from "../routes.js";

const HealthRes = z.object({ status: z.literal("ok") });
const VersionRes = z.object({ version: z.string() });

/**
 * Service routes: health, version and the OpenAPI document answer without a key; server info
 * (which tells the platform, CPUs and served models) needs one.
 */
export async function serviceRoutes(app: FastifyInstance): Promise<void> {
  for (const url of ["/health", "/v1/health"]) {
    defineRoute(app, { method: "GET", url, summary: "Liveness check", tags: ["service"], response: HealthRes }, async () => ({ status: "ok" }));
  }

  defineRoute(app, { method: "GET", url: "/version", summary: "Service version", tags: ["service"], response: VersionRes }, async () => ({ version: flywheelVersion }));

  await app.register(async (authed) => {
    authed.addHook("onRequest", requireApiKey(app.services.store, "detail", ["bearer"]));
    serverInfoRoute(authed);
  });

  defineRoute(app, { method: "GET", url: "/openapi.json", summary: "This document", tags: ["service"] }, async () => buildOpenApiDocument(app.routeCatalog, { title: "Flywheel", version: flywheelVersion }));
}

function serverInfoRoute(app: FastifyInstance): void {
  defineRoute(app, { method: "GET", url: "/server_info", summary: "What this server runs on", tags: ["service"], security: "bearer" }, async () => {
    const { store, catalog, config } = app.services;
    return {
      name: "flywheel",
      version: flywheelVersion,
      database: store.dialect,
      base_models: [...new Set([...catalog.list().map((entry) => entry.id), ...config.upstreams.map((upstream) => upstream.modelId)])].sort(),
      upstream_models: config.upstreams.map((upstream) => upstream.modelId),
      trace_base_path: config.traceBasePath,
      node: process.version,
      platform: `${os.platform()}-${os.arch()}`,
      cpus: os.cpus().length,
    };
  });
}
