import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "./app.js";

/** A trace API caller with HTTP Basic `api:<key>`, as the Weave SDKs authenticate. */
export interface TraceClient {
  post(url: string, body: unknown): Promise<LightMyRequestResponse>;
  /** POST and parse a 200 JSON body (fails the test with the body otherwise). */
  json<T = any>(url: string, body: unknown): Promise<T>;
  /** POST to a JSON Lines endpoint and parse its lines. */
  lines<T = any>(url: string, body: unknown): Promise<T[]>;
}

export function traceClient(t: TestApp, key: string, basePath = "/trace"): TraceClient {
  const authorization = `Basic ${Buffer.from(`api:${key}`).toString("base64")}`;
  const post = (url: string, body: unknown) => t.app.inject({ method: "POST", url: `${basePath}${url}`, payload: body as object, headers: { authorization } });
  return {
    post,
    async json(url, body) {
      const res = await post(url, body);
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
      return res.json();
    },
    async lines(url, body) {
      const res = await post(url, body);
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
      return res.body
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line));
    },
  };
}

/** A call start body (`StartedCallSchemaForInsert`) with sensible defaults. */
export function startOf(project: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { project_id: project, op_name: "op", started_at: "2024-05-01T12:00:00.000Z", attributes: {}, inputs: {}, ...fields };
}

export function endOf(project: string, id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { project_id: project, id, ended_at: "2024-05-01T12:00:01.000Z", summary: {}, output: null, ...fields };
}
