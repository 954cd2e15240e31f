import { describe, expect, it } from "vitest";
import { bulkInsert, chunked, rawStatement, rowsPerStatement, valuesPlaceholders } from "./dialect.js";

describe("statements written as text", () => {
  it("numbers placeholders for PostgreSQL and keeps `?` for SQLite", () => {
    expect(rawStatement("postgres", "SELECT ? + ?, ?", [1, 2, 3]).sql).toBe("SELECT $1 + $2, $3");
    expect(rawStatement("sqlite", "SELECT ? + ?, ?", [1, 2, 3]).sql).toBe("SELECT ? + ?, ?");
    expect(rawStatement("sqlite", "SELECT ?", [7]).parameters).toEqual([7]);
  });

  it("writes one placeholder group per row", () => {
    expect(valuesPlaceholders(2, 3)).toBe("(?, ?, ?), (?, ?, ?)");
  });

  it("keeps every statement under SQLite's bound-parameter limit", () => {
    expect(rowsPerStatement(7) * 7).toBeLessThanOrEqual(32766);
    expect(rowsPerStatement(100_000)).toBe(1);
  });

  it("splits a bulk insert into power-of-two chunks that carry every row in order", () => {
    const rows = Array.from({ length: 13 }, (_, index) => [index, `row ${index}`]);
    const statements = bulkInsert("postgres", "INSERT INTO t (a, b)", 2, rows, "ON CONFLICT DO NOTHING");
    expect(statements.map((statement) => statement.parameters.length / 2)).toEqual([8, 4, 1]);
    expect(statements.flatMap((statement) => statement.parameters)).toEqual(rows.flat());
    expect(statements[2]!.sql).toBe("INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING");
  });

  it("splits long IN lists", () => {
    expect(chunked([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
});
