import type { Kysely } from "kysely";
import { decodeJson, encodeJson } from "../../json.js";
import type { Database } from "../../schema.js";
import type { StoredRow, TableRepository } from "../repository.js";
import { chunked } from "../../dialect.js";

/** Rows are stored once per project by digest; a table is its ordered list of row digests. */
export class SqlTableRepository implements TableRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertRows(projectId: string, rows: StoredRow[]): Promise<void> {
    const unique = [...new Map(rows.map((row) => [row.digest, row])).values()];
    for (const chunk of chunked(unique, 200)) {
      await this.db
        .insertInto("trace_table_rows")
        .values(chunk.map((row) => ({ project_id: projectId, digest: row.digest, val_dump: row.valDump, size_bytes: row.sizeBytes })))
        .onConflict((oc) => oc.columns(["project_id", "digest"]).doNothing())
        .execute();
    }
  }

  async insertTable(projectId: string, digest: string, rowDigests: string[], createdAt: string): Promise<void> {
    await this.db
      .insertInto("trace_tables")
      .values({ project_id: projectId, digest, row_digests: encodeJson(rowDigests), row_count: rowDigests.length, created_at: createdAt })
      .onConflict((oc) => oc.columns(["project_id", "digest"]).doNothing())
      .execute();
  }

  async findTableRowDigests(projectId: string, digest: string): Promise<string[] | undefined> {
    const row = await this.db.selectFrom("trace_tables").select("row_digests").where("project_id", "=", projectId).where("digest", "=", digest).executeTakeFirst();
    return row ? decodeJson<string[]>(row.row_digests) : undefined;
  }

  async findRows(projectId: string, digests: string[]): Promise<Map<string, StoredRow>> {
    const found = new Map<string, StoredRow>();
    for (const chunk of chunked([...new Set(digests)])) {
      const rows = await this.db.selectFrom("trace_table_rows").select(["digest", "val_dump", "size_bytes"]).where("project_id", "=", projectId).where("digest", "in", chunk).execute();
      for (const row of rows) found.set(row.digest, { digest: row.digest, valDump: row.val_dump, sizeBytes: Number(row.size_bytes) });
    }
    return found;
  }

  async existingRowDigests(projectId: string, digests: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of chunked([...new Set(digests)])) {
      const rows = await this.db.selectFrom("trace_table_rows").select("digest").where("project_id", "=", projectId).where("digest", "in", chunk).execute();
      for (const row of rows) found.add(row.digest);
    }
    return found;
  }

  async tableCounts(projectId: string, digests: string[]): Promise<{ digest: string; count: number }[]> {
    const counts: { digest: string; count: number }[] = [];
    for (const chunk of chunked([...new Set(digests)])) {
      const rows = await this.db.selectFrom("trace_tables").select(["digest", "row_count"]).where("project_id", "=", projectId).where("digest", "in", chunk).execute();
      for (const row of rows) counts.push({ digest: row.digest, count: Number(row.row_count) });
    }
    return counts;
  }
}
