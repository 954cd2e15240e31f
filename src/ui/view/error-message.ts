/**
 * The human message of an API error body, whichever surface answered: `{"detail": "..."}` or a
 * 422 `{"detail": [{loc, msg}]}` (training), `{"reason": "..."}` (trace), `{"error": {"message"}}`
 * (OpenAI-style chat).
 */
export function errorMessageOf(status: number, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body.trim() ? `${status}: ${body.trim().slice(0, 300)}` : `The server answered ${status}`;
  }
  if (parsed && typeof parsed === "object") {
    const record = parsed as Record<string, unknown>;
    if (typeof record.detail === "string") return record.detail;
    if (Array.isArray(record.detail)) {
      return record.detail.map((issue) => (issue && typeof issue === "object" ? `${((issue as { loc?: unknown[] }).loc ?? []).join(".")}: ${(issue as { msg?: string }).msg}` : String(issue))).join("; ");
    }
    if (typeof record.reason === "string") return record.reason;
    const error = record.error as { message?: unknown } | undefined;
    if (error && typeof error.message === "string") return error.message;
  }
  return `The server answered ${status}`;
}
