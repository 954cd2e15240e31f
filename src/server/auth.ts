import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticateApiKey, type Principal } from "../store/keys.js";
import type { ApiKeyRole } from "../store/schema.js";
import type { Store } from "../store/db.js";
import { type ErrorStyle, sendError } from "./errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated caller; set by an auth hook before any handler runs. */
    principal?: Principal;
  }
}

export type CredentialScheme = "bearer" | "basic";

/**
 * Reads the API key from `Authorization`. Bearer (or an `x-api-key` header) is always accepted; with `basic` also
 * `Basic base64(<any user>:<key>)` (the Weave SDKs send user `api`) and a `wandb-api-key` header.
 */
export function readApiKey(request: FastifyRequest, schemes: CredentialScheme[]): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === "string") {
    const [scheme, ...rest] = header.trim().split(/\s+/);
    const value = rest.join(" ");
    if (scheme?.toLowerCase() === "bearer" && value) return value;
    if (scheme?.toLowerCase() === "basic" && value && schemes.includes("basic")) {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const password = colon >= 0 ? decoded.slice(colon + 1) : "";
      if (password) return password;
    }
  }
  // Anthropic's SDKs send the key as `x-api-key` (the Messages API lives under /v1 too).
  const xApiKey = request.headers["x-api-key"];
  if (typeof xApiKey === "string" && xApiKey) return xApiKey;
  if (schemes.includes("basic")) {
    const wandbKey = request.headers["wandb-api-key"];
    if (typeof wandbKey === "string" && wandbKey) return wandbKey;
  }
  return undefined;
}

/**
 * An onRequest hook that rejects callers without a live key with 401 in the route's error style,
 * and a key of another role with 403: a worker key never reaches the public APIs, a user's key
 * never the worker protocol.
 */
export function requireApiKey(store: Store, defaultStyle: ErrorStyle, schemes: CredentialScheme[], role: ApiKeyRole = "user") {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const style = request.routeOptions.config?.errorStyle ?? defaultStyle;
    const key = readApiKey(request, schemes);
    const challenge = { "www-authenticate": schemes.includes("basic") ? 'Basic realm="flywheel"' : "Bearer" };
    if (!key) {
      sendError(reply, style, 401, "Missing API key: send 'Authorization: Bearer <key>'", { headers: challenge, type: "AuthenticationError" });
      return reply;
    }
    const principal = await authenticateApiKey(store.db, key);
    if (!principal) {
      sendError(reply, style, 401, "Invalid or revoked API key", { headers: challenge, type: "AuthenticationError" });
      return reply;
    }
    if (principal.role !== role) {
      const message = role === "user" ? "This is a worker key: it is accepted only by the worker protocol (/v1/worker/...)" : "This route is for training workers: use a key made with 'flywheel keys create --role worker'";
      sendError(reply, style, 403, message, { type: "PermissionDeniedError" });
      return reply;
    }
    request.principal = principal;
  };
}

/** The caller of a route behind `requireApiKey`. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route is missing its auth hook");
  return request.principal;
}
