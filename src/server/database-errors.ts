/**
 * Database errors that a request's values cause, rather than a fault of the server: PostgreSQL's
 * data exceptions (class 22: a NUL in text, a value out of a type's range) and program limits
 * (54000: an index row too large, too many columns), and SQLite's limits (an expression tree too
 * deep, too many terms or variables, a value too big). The app answers these 400 in the surface's
 * shape; the message names the problem without the database's internal names.
 */
export function requestCausedDatabaseError(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : "";
  if (typeof code !== "string") return undefined;
  if (code === "22021" || code === "22P05") return "The request contains a NUL character (\\u0000) or a character that text fields cannot hold";
  if (/^22[0-9A-Z]{3}$/.test(code)) return `A value in the request cannot be stored: ${message}`;
  if (code === "54000" || code === "54001" || code === "54011" || code === "54023") {
    return "A value in the request is too long or too complex for the database to store or index (ids, names and references must stay under a few kilobytes)";
  }
  if (code === "SQLITE_TOOBIG") return "A value in the request is too big for the database";
  if (code === "SQLITE_ERROR" && /too many (terms|SQL variables|columns|arguments)|Expression tree is too large|parser stack overflow|pattern too complex/i.test(message)) {
    return `The request is beyond the database's limits: ${message}`;
  }
  return undefined;
}
