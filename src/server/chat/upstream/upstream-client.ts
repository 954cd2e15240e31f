import type { UpstreamConfig } from "../../../config-upstreams.js";
import { ApiError } from "../../errors.js";
import { badGateway, errorMessageOf } from "../../upstream-errors.js";

/**
 * HTTP to one upstream OpenAI-compatible server (vLLM's API): chat completions and vLLM's dynamic
 * LoRA loading. Connection failures and upstream faults become 502s that name the upstream, so a
 * caller can tell Flywheel's errors from its upstream's.
 */
export class UpstreamClient {
  constructor(readonly config: UpstreamConfig) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json", ...extra };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    return headers;
  }

  private async post(path: string, body: unknown, options: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
    const url = `${this.config.baseUrl}${path}`;
    try {
      return await fetch(url, { method: "POST", headers: this.headers(options.headers), body: JSON.stringify(body), signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
      throw badGateway(`The upstream inference server for \`${this.config.modelId}\` at ${this.config.baseUrl} cannot be reached${cause}.`);
    }
  }

  /** POST /chat/completions with the body as given; the caller reads the answer (a stream or JSON). */
  chat(body: Record<string, unknown>, signal: AbortSignal, requestId: string | undefined): Promise<Response> {
    return this.post("/chat/completions", body, { signal, headers: requestId ? { "x-request-id": requestId } : {} });
  }

  /** POST /load_lora_adapter; an adapter the upstream already has under this name counts as loaded. */
  async loadAdapter(loraName: string, loraPath: string): Promise<void> {
    const response = await this.post("/load_lora_adapter", { lora_name: loraName, lora_path: loraPath });
    if (response.ok) return;
    const message = await errorMessageOf(response);
    if (response.status === 400 && message.includes("has already been loaded")) return;
    throw badGateway(
      `The upstream inference server for \`${this.config.modelId}\` at ${this.config.baseUrl} could not load the checkpoint adapter from ${loraPath} ` +
        `(HTTP ${response.status}: ${message}). It must run with runtime LoRA updating enabled and read Flywheel's adapter directory at that path.`,
    );
  }
}

/**
 * An upstream's error answer as this server's: a client error keeps its status and message (the
 * upstream checked the request as vLLM does), a server error becomes a 502 naming the upstream.
 */
export async function upstreamError(response: Response, config: UpstreamConfig): Promise<ApiError> {
  const message = await errorMessageOf(response);
  if (response.status >= 400 && response.status < 500) return new ApiError(response.status, message);
  return badGateway(`The upstream inference server for \`${config.modelId}\` at ${config.baseUrl} failed (HTTP ${response.status}): ${message}`);
}
