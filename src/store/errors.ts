/** True when a database error is a unique-constraint violation, on SQLite or PostgreSQL. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}

/** A pagination cursor (`after`) that names no item of the list. */
export class CursorNotFoundError extends Error {
  constructor(readonly cursor: string) {
    super(`cursor '${cursor}' does not name an item of this list`);
  }
}
