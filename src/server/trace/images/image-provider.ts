import type { ImageUpstreamConfig } from "../../../config.js";
import { TraceBadRequest } from "../../../store/trace/errors.js";
import { badGateway, errorMessageOfText } from "../../upstream-errors.js";

/** What `/image/create` forwards: OpenAI's image generation request, as Weave's inputs name it. */
export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  n?: number;
}

/**
 * HTTP to the configured OpenAI-compatible image provider (`FLYWHEEL_IMAGE_UPSTREAM`). The
 * provider refusing the request is the caller's problem (400 with the provider's message); the
 * provider being unreachable, failing or answering nonsense is a 502 that names it, never a 500.
 */
export class ImageProvider {
  constructor(readonly config: ImageUpstreamConfig) {}

  /** POST {base}/images/generations; the provider's JSON answer as it came. */
  async generate(request: ImageGenerationRequest, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const url = `${this.config.baseUrl}/images/generations`;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method: "POST", headers, body: JSON.stringify(request), signal });
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw badGateway(`The image provider at ${this.config.baseUrl} cannot be reached: ${reason}`);
    }
    if (!response.ok) {
      const message = errorMessageOfText(text, response.statusText);
      if (response.status < 500) throw new TraceBadRequest(message);
      throw badGateway(`The image provider at ${this.config.baseUrl} failed (HTTP ${response.status}): ${message}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badGateway(`The image provider at ${this.config.baseUrl} answered HTTP ${response.status} with something other than a JSON object: ${text.slice(0, 200)}`);
    }
    return body as Record<string, unknown>;
  }
}
