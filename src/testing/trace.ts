import type { InjectOptions, LightMyRequestResponse } from "fastify";
import type { TestApp } from "./app.js";

/** A trace API caller with HTTP Basic `api:<key>` under the trace base path, as the Weave SDKs call it. */
export interface TraceClient {
  /** POST a JSON body (an object, or JSON text sent verbatim). */
  post(path: string, payload: unknown): Promise<LightMyRequestResponse>;
  put(path: string, payload: unknown): Promise<LightMyRequestResponse>;
  get(path: string, query?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
  delete(path: string, query?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** POST and parse a 200 JSON body (fails the test with the body otherwise). */
  json<T = any>(path: string, payload: unknown): Promise<T>;
  /** POST to a JSON Lines endpoint and parse its lines (fails the test on a non-200 answer). */
  lines<T = any>(path: string, payload: unknown): Promise<T[]>;
}

export function basicAuth(key: string): string {
  return `Basic ${Buffer.from(`api:${key}`).toString("base64")}`;
}

export function traceClient(t: TestApp, key: string, basePath = "/trace"): TraceClient {
  const request = (options: InjectOptions) => t.app.inject({ ...options, url: `${basePath}${options.url ?? ""}`, headers: { authorization: basicAuth(key), ...options.headers } });
  const withBody = (method: "POST" | "PUT") => (path: string, payload: unknown) =>
    typeof payload === "string" ? request({ method, url: path, payload, headers: { "content-type": "application/json" } }) : request({ method, url: path, payload: payload as InjectOptions["payload"] });
  const post = withBody("POST");
  const expectOk = async (path: string, payload: unknown) => {
    const res = await post(path, payload);
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
    return res;
  };
  return {
    post,
    put: withBody("PUT"),
    get: (path, query) => request({ method: "GET", url: path, query }),
    delete: (path, query) => request({ method: "DELETE", url: path, query }),
    request,
    json: async (path, payload) => (await expectOk(path, payload)).json(),
    lines: async (path, payload) => jsonLines((await expectOk(path, payload)).body) as never[],
  };
}

/** Parses a JSON Lines body. */
export function jsonLines(body: string): unknown[] {
  return body
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** A call start body (`StartedCallSchemaForInsert`) with sensible defaults. */
export function startOf(project: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { project_id: project, op_name: "op", started_at: "2024-05-01T12:00:00.000Z", attributes: {}, inputs: {}, ...fields };
}

/** A call end body (`EndedCallSchemaForInsert`) with sensible defaults. */
export function endOf(project: string, id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { project_id: project, id, ended_at: "2024-05-01T12:00:01.000Z", summary: {}, output: null, ...fields };
}

/**
 * Polls `probe` until it returns a value (not undefined), for work the server finishes after
 * answering (server-side evaluations and scorings); fails after `timeoutMs`.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
