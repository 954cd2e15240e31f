import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { DEFAULT_UI_DIR, loadUiAssets } from "./assets.js";

/**
 * The UI may load only what this server serves: its own scripts, styles and API. No inline code,
 * no frames, no plugins; `connect-src` falls back to 'self' too.
 */
export const UI_CONTENT_SECURITY_POLICY = "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; form-action 'none'";

const IMMUTABLE = "public, max-age=31536000, immutable";

export interface UiRoutesOptions {
  uiDir?: string;
}

/**
 * Serves the web UI: `/` is index.html (revalidated every time, since it names the current bundle)
 * and `/assets/*` the content-hashed bundles, cached for a year. Public: the page asks for a key.
 */
export async function uiRoutes(app: FastifyInstance, options: UiRoutesOptions): Promise<void> {
  const assets = loadUiAssets(options.uiDir ?? DEFAULT_UI_DIR, app.services.config.traceBasePath);

  const securityHeaders = (reply: FastifyReply) => reply.header("content-security-policy", UI_CONTENT_SECURITY_POLICY).header("x-content-type-options", "nosniff").header("referrer-policy", "no-referrer");

  app.get("/", async (_request, reply) => {
    if (!assets) throw new ApiError(503, "The web UI is not built: run 'npm run build'");
    securityHeaders(reply).header("cache-control", "no-cache").type("text/html; charset=utf-8");
    return assets.indexHtml;
  });

  app.get("/assets/*", async (request: FastifyRequest<{ Params: { "*": string } }>, reply) => {
    const asset = assets?.files.get(`/assets/${request.params["*"]}`);
    if (!asset) throw new ApiError(404, `No UI asset '${request.url}'`, { type: "NotFoundError" });
    securityHeaders(reply).header("cache-control", IMMUTABLE).header("vary", "accept-encoding").type(asset.contentType);
    if (asset.gzip && acceptsGzip(request)) {
      reply.header("content-encoding", "gzip");
      return reply.send(asset.gzip);
    }
    return reply.send(asset.body);
  });
}

function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers["accept-encoding"];
  return typeof header === "string" && /\bgzip\b/.test(header);
}
