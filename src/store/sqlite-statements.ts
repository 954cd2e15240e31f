import type BetterSqlite3 from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/**
 * A better-sqlite3 database for Kysely that keeps the most recently used prepared statements, so a
 * statement that runs again (the same query, the same bulk insert shape) is not compiled again.
 * Compiling a 500-row INSERT takes about a millisecond; running it, a few. A statement that is
 * still being iterated is never handed out twice: a fresh one is prepared for that call.
 */
export function withStatementCache(database: BetterSqlite3.Database, capacity = 128): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      const cached = statements.get(sql);
      if (cached && !cached.busy) {
        // Re-inserting moves the entry to the end: the map's order is least to most recently used.
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      if (cached) return statement;
      statements.set(sql, statement);
      if (statements.size > capacity) statements.delete(statements.keys().next().value!);
      return statement;
    },
  };
}
