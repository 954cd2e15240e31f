import { ApiError } from "./errors.js";

/** An upstream server (an inference server, an image provider) that failed or could not be reached: a 502 naming it. */
export function badGateway(message: string): ApiError {
  return new ApiError(502, message, { type: "BadGatewayError" });
}

/** The message of an error answer in vLLM's shapes: `{"error": {"message"}}`, `{"message"}`, or plain text. */
export async function errorMessageOf(response: Response): Promise<string> {
  return errorMessageOfText(await response.text(), response.statusText);
}

/** `errorMessageOf` on a body already read; `fallback` (the status text) when it is empty. */
export function errorMessageOfText(text: string, fallback: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    if (typeof body.error === "object" && typeof body.error?.message === "string") return body.error.message;
    if (typeof body.error === "string") return body.error;
    if (typeof body.message === "string") return body.message;
    if (body.detail !== undefined) return typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
  } catch {
    // Not JSON: the text itself.
  }
  return text.slice(0, 2000) || fallback;
}
