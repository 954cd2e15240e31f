import { errorMessageOf } from "./view/error-message.js";

/** An HTTP error from the API, with the message its body carried. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The public API as the UI calls it: the training and chat API under /v1 and the trace API under
 * its base path, both with `Authorization: Bearer <key>`. Nothing else is reachable (the CSP
 * allows only this origin).
 */
export class Api {
  constructor(
    readonly key: string,
    readonly traceBase: string,
  ) {}

  get<T>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>("DELETE", path, body);
  }

  /** POST to a trace endpoint (path relative to the trace base) that answers JSON. */
  trace<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", `${this.traceBase}${path}`, body);
  }

  /** POST to a trace endpoint that answers JSON Lines. */
  async traceLines<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T[]> {
    const text = await this.send("POST", `${this.traceBase}${path}`, body, signal).then((response) => response.text());
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as T);
  }

  /** GET a trace endpoint that answers JSON Lines (the v2 listings). */
  async traceGetLines<T>(path: string): Promise<T[]> {
    const text = await this.send("GET", `${this.traceBase}${path}`).then((response) => response.text());
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as T);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    return (await response.json()) as T;
  }

  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    if (!response.ok) {
      const text = await response.text();
      throw new ApiError(response.status, errorMessageOf(response.status, text));
    }
    return response;
  }
}
