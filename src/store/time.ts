/** The one timestamp format stored: ISO-8601 UTC with milliseconds, which sorts as text. */
export function nowIso(): string {
  return new Date().toISOString();
}
