import type { InjectOptions, LightMyRequestResponse } from "fastify";
import type { TestApp } from "./app.js";

export interface TraceClient {
  /** POST a JSON body (an object, or JSON text sent verbatim). */
  post(path: string, payload: unknown): Promise<LightMyRequestResponse>;
  put(path: string, payload: unknown): Promise<LightMyRequestResponse>;
  get(path: string, query?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
  delete(path: string, query?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

export function basicAuth(key: string): string {
  return `Basic ${Buffer.from(`api:${key}`).toString("base64")}`;
}

/** Calls the trace API as the Weave SDKs do: HTTP Basic `api:<key>` under the trace base path. */
export function traceClient(t: TestApp, key: string, basePath = "/trace"): TraceClient {
  const request = (options: InjectOptions) => t.app.inject({ ...options, url: `${basePath}${options.url ?? ""}`, headers: { authorization: basicAuth(key), ...options.headers } });
  const withBody = (method: "POST" | "PUT") => (path: string, payload: unknown) =>
    typeof payload === "string"
      ? request({ method, url: path, payload, headers: { "content-type": "application/json" } })
      : request({ method, url: path, payload: payload as InjectOptions["payload"] });
  return {
    post: withBody("POST"),
    put: withBody("PUT"),
    get: (path, query) => request({ method: "GET", url: path, query }),
    delete: (path, query) => request({ method: "DELETE", url: path, query }),
    request,
  };
}

/** Parses a JSON Lines body. */
export function jsonLines(body: string): unknown[] {
  return body
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
