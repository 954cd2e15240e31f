import { SftDataError } from "./sft-data.js";

/** How much a job may fetch from a `training_data_url` on the web, and for how long. */
export interface RemoteDataLimits {
  maxBytes: number;
  timeoutMs: number;
}

export const DEFAULT_REMOTE_DATA_LIMITS: RemoteDataLimits = { maxBytes: 1024 * 1024 * 1024, timeoutMs: 120_000 };

/** Whether a `training_data_url` names a file on the web (`http://`, `https://`) rather than an artifact. */
export function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url.trim());
}

/** The file name a web URL ends in (`train.jsonl`, `trajectories.jsonl`), for row parsing and messages. */
export function webFileName(url: string): string {
  const last = new URL(url).pathname.split("/").filter(Boolean).at(-1);
  return last ? decodeURIComponent(last) : "train.jsonl";
}

/**
 * Fetches a training data file over HTTP(S): at most `maxBytes` (refused from Content-Length when
 * it says so, else cut off while reading), within `timeoutMs` overall. Every failure is an
 * `SftDataError` that says what happened, which the job reports as its `training_failed` message.
 */
export async function fetchTrainingData(url: string, limits: RemoteDataLimits, signal?: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const fail = (detail: string): never => {
    throw new SftDataError(`could not fetch training_data_url ${url}: ${detail}`);
  };
  let response: Response;
  try {
    response = await fetch(url, { signal: combined, redirect: "follow", headers: { accept: "application/jsonl, application/x-ndjson, text/plain, */*" } });
  } catch (error) {
    if (signal?.aborted) throw error;
    return fail(timeout.aborted ? `no answer within ${limits.timeoutMs / 1000} s` : describeFetchError(error));
  }
  if (!response.ok) {
    await response.body?.cancel();
    return fail(`the server answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`);
  }
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel();
    return fail(`the file is ${declared} bytes, more than the limit of ${limits.maxBytes}`);
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for await (const chunk of response.body ?? []) {
      received += chunk.byteLength;
      if (received > limits.maxBytes) {
        await response.body?.cancel().catch(() => {});
        return fail(`the file is more than the limit of ${limits.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof SftDataError) throw error;
    if (signal?.aborted) throw error;
    return fail(timeout.aborted ? `the download did not finish within ${limits.timeoutMs / 1000} s` : describeFetchError(error));
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return fail("the file is not UTF-8 text");
  }
}

/** Node's fetch says "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`. */
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.message ?? "connection failed"} (${cause.code})`;
  return error instanceof Error ? error.message : String(error);
}
