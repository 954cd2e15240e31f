import os from "node:os";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { flywheelVersion } from "../../version.js";
import { requireApiKey } from "../auth.js";
import { buildOpenApiDocument, defineRoute } from "../routes.js";

const HealthRes = z.object({ status: z.literal("ok") });
const VersionRes = z.object({ version: z.string() });
const ServerInfoRes = z.object({
  name: z.literal("flywheel"),
  version: z.string(),
  database: z.enum(["sqlite", "postgres"]),
  base_models: z.array(z.string()).describe("Every model id chat completions serve: local ones and the upstreams'"),
  upstream_models: z.array(z.string()),
  trace_base_path: z.string(),
  node: z.string(),
  platform: z.string(),
  cpus: z.int().min(1),
});
/** An OpenAPI 3.1 document; its operations are as `buildOpenApiDocument` writes them. */
const OpenApiRes = z.object({
  openapi: z.literal("3.1.0"),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
  components: z.object({ securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())), schemas: z.record(z.string(), z.record(z.string(), z.unknown())) }),
});

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

  defineRoute(app, { method: "GET", url: "/openapi.json", summary: "This document", tags: ["service"], response: OpenApiRes }, async () => buildOpenApiDocument(app.routeCatalog, { title: "Flywheel", version: flywheelVersion }));
}

function serverInfoRoute(app: FastifyInstance): void {
  defineRoute(app, { method: "GET", url: "/server_info", summary: "What this server runs on", tags: ["service"], response: ServerInfoRes, security: "bearer" }, async () => {
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
