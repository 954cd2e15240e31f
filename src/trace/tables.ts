import { nowTimestamp } from "../store/trace/timestamps.js";
import { rowDigestOf, tableDigestOf } from "./digest.js";
import { TraceBadRequest, TraceInsertTooLarge, TraceNotFound } from "../store/trace/errors.js";
import { parseJsonLossless } from "./json/lossless.js";
import { pythonJsonDumps } from "../python-format.js";
import { isJsonObject } from "../store/trace/object-class.js";
import { MAX_STORED_VALUE_BYTES } from "./objects.js";
import type { StoredRow, TableRepository } from "../store/trace/repository.js";
import { compareSortValues, sortValueAt, validateSortField } from "./table-sort.js";

export type TableUpdate = { append: { row: Record<string, unknown> } } | { pop: { index: number } } | { insert: { index: number; row: Record<string, unknown> } };

export interface TableRowView {
  digest: string;
  val: unknown;
  originalIndex: number;
}

export interface TableQueryInput {
  digest: string;
  rowDigests?: string[];
  sortBy?: { field: string; direction: "asc" | "desc" }[];
  limit?: number;
  offset?: number;
}

const PAGE = 500;

/** Content-addressed tables (`docs/api/trace.md#tables`): rows stored once by digest, a table is their ordered list. */
export class TableService {
  constructor(
    private readonly tables: TableRepository,
    private readonly now: () => string = nowTimestamp,
  ) {}

  async create(projectId: string, rows: unknown[], expectedDigest?: string | null): Promise<{ digest: string; rowDigests: string[] }> {
    const stored = rows.map(prepareRow);
    const rowDigests = stored.map((row) => row.digest);
    const digest = tableDigestOf(rowDigests);
    checkExpected(expectedDigest, digest);
    await this.tables.insertRows(projectId, stored);
    await this.tables.insertTable(projectId, digest, rowDigests, this.now());
    return { digest, rowDigests };
  }

  async createFromDigests(projectId: string, rowDigests: string[], expectedDigest?: string | null): Promise<{ digest: string }> {
    const digest = tableDigestOf(rowDigests);
    checkExpected(expectedDigest, digest);
    const existing = await this.tables.existingRowDigests(projectId, rowDigests);
    const missing = [...new Set(rowDigests.filter((row) => !existing.has(row)))];
    if (missing.length > 0) throw new TraceNotFound(`Rows not found: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`);
    await this.tables.insertTable(projectId, digest, rowDigests, this.now());
    return { digest };
  }

  async update(projectId: string, baseDigest: string, updates: TableUpdate[]): Promise<{ digest: string; updatedRowDigests: string[] }> {
    const rowDigests = await this.tables.findTableRowDigests(projectId, baseDigest);
    if (!rowDigests) throw new TraceNotFound(`Table ${baseDigest} not found`);
    const newRows: StoredRow[] = [];
    const updated: string[] = [];
    for (const update of updates) {
      if ("append" in update) {
        const row = prepareRow(update.append.row);
        newRows.push(row);
        rowDigests.push(row.digest);
        updated.push(row.digest);
      } else if ("pop" in update) {
        const { index } = update.pop;
        if (index < 0 || index >= rowDigests.length) throw new TraceBadRequest("Index out of range");
        updated.push(...rowDigests.splice(index, 1));
      } else {
        const { index } = update.insert;
        if (index < 0 || index > rowDigests.length) throw new TraceBadRequest("Index out of range");
        const row = prepareRow(update.insert.row);
        newRows.push(row);
        rowDigests.splice(index, 0, row.digest);
        updated.push(row.digest);
      }
    }
    const digest = tableDigestOf(rowDigests);
    await this.tables.insertRows(projectId, newRows);
    await this.tables.insertTable(projectId, digest, rowDigests, this.now());
    return { digest, updatedRowDigests: updated };
  }

  async query(projectId: string, input: TableQueryInput): Promise<TableRowView[]> {
    const rows: TableRowView[] = [];
    for await (const row of this.queryStream(projectId, input)) rows.push(row);
    return rows;
  }

  /** Rows in table order (or sorted), filtered and paged; an unknown table has no rows, as in Weave. */
  async *queryStream(projectId: string, input: TableQueryInput): AsyncGenerator<TableRowView> {
    const sortBy = input.sortBy ?? [];
    for (const sort of sortBy) validateSortField(sort.field);
    const rowDigests = await this.tables.findTableRowDigests(projectId, input.digest);
    if (!rowDigests) return;
    let entries = rowDigests.map((digest, originalIndex) => ({ digest, originalIndex }));
    if (input.rowDigests && input.rowDigests.length > 0) {
      const wanted = new Set(input.rowDigests);
      entries = entries.filter((entry) => wanted.has(entry.digest));
    }
    const offset = input.offset ?? 0;
    const end = input.limit === undefined ? undefined : offset + input.limit;
    if (sortBy.length > 0) {
      const loaded = await this.load(projectId, entries);
      const keyed = loaded.map((row) => ({ row, keys: sortBy.map((sort) => sortValueAt(row.val, sort.field)) }));
      keyed.sort((a, b) => {
        for (let i = 0; i < sortBy.length; i++) {
          const order = compareSortValues(a.keys[i], b.keys[i]);
          if (order !== 0) return (sortBy[i] as { direction: string }).direction === "desc" ? -order : order;
        }
        return a.row.originalIndex - b.row.originalIndex;
      });
      yield* keyed.slice(offset, end).map((entry) => entry.row);
      return;
    }
    const page = entries.slice(offset, end);
    for (let i = 0; i < page.length; i += PAGE) yield* await this.load(projectId, page.slice(i, i + PAGE));
  }

  /** The row count of a table; 404 for an unknown one. */
  async count(projectId: string, digest: string): Promise<number> {
    const [found] = await this.tables.tableCounts(projectId, [digest]);
    if (!found) throw new TraceNotFound(`Table ${digest} not found`);
    return found.count;
  }

  /** Counts (and optionally stored sizes) of the tables among `digests` that exist, in request order. */
  async stats(projectId: string, digests: string[], includeStorageSize: boolean): Promise<{ digest: string; count: number; storageSizeBytes?: number }[]> {
    const counts = new Map((await this.tables.tableCounts(projectId, digests)).map((entry) => [entry.digest, entry.count]));
    const result: { digest: string; count: number; storageSizeBytes?: number }[] = [];
    for (const digest of [...new Set(digests)]) {
      const count = counts.get(digest);
      if (count === undefined) continue;
      if (!includeStorageSize) {
        result.push({ digest, count });
        continue;
      }
      const rowDigests = (await this.tables.findTableRowDigests(projectId, digest)) ?? [];
      const rows = await this.tables.findRows(projectId, rowDigests);
      const storageSizeBytes = rowDigests.reduce((sum, row) => sum + (rows.get(row)?.sizeBytes ?? 0), 0);
      result.push({ digest, count, storageSizeBytes });
    }
    return result;
  }

  /** One row's value, for refs ending in `/id/<row digest>`. */
  async readRow(projectId: string, rowDigest: string): Promise<unknown> {
    const row = (await this.tables.findRows(projectId, [rowDigest])).get(rowDigest);
    if (!row) throw new TraceNotFound(`Row ${rowDigest} not found`);
    return parseJsonLossless(row.valDump);
  }

  /** Every row value of a table in order, for table refs; 404 for an unknown table. */
  async readAll(projectId: string, digest: string): Promise<unknown[]> {
    if (!(await this.tables.findTableRowDigests(projectId, digest))) throw new TraceNotFound(`Table ${digest} not found`);
    return (await this.query(projectId, { digest })).map((row) => row.val);
  }

  private async load(projectId: string, entries: { digest: string; originalIndex: number }[]): Promise<TableRowView[]> {
    const rows = await this.tables.findRows(
      projectId,
      entries.map((entry) => entry.digest),
    );
    return entries.map((entry) => {
      const row = rows.get(entry.digest);
      return { digest: entry.digest, originalIndex: entry.originalIndex, val: row ? parseJsonLossless(row.valDump) : null };
    });
  }
}

function prepareRow(row: unknown): StoredRow {
  if (!isJsonObject(row)) throw new TraceBadRequest("All rows must be dictionaries");
  const valDump = pythonJsonDumps(row, { sortKeys: false });
  const sizeBytes = Buffer.byteLength(valDump);
  if (sizeBytes > MAX_STORED_VALUE_BYTES) throw new TraceInsertTooLarge(`Database insertion failed. Record too large: a table row is over ${MAX_STORED_VALUE_BYTES} bytes.`);
  return { digest: rowDigestOf(row), valDump, sizeBytes };
}

function checkExpected(expected: string | null | undefined, actual: string): void {
  if (expected && expected !== actual) throw new TraceBadRequest(`Digest mismatch: expected_digest ${expected} does not match the computed digest ${actual}`);
}
