import { z } from "zod";
import { JsonDict, Limit, Offset, OptionalString, ProjectId, SortBy, StringList } from "../common/schemas.js";

/** Requests of the table endpoints (`docs/api/trace.md#tables`); unknown fields are ignored, as Weave does. */
export const TableCreateReq = z.object({ table: z.object({ project_id: ProjectId, rows: z.array(JsonDict), expected_digest: OptionalString }) });
const TableUpdateSpec = z.union([z.object({ append: z.object({ row: JsonDict }) }), z.object({ pop: z.object({ index: z.number().int() }) }), z.object({ insert: z.object({ index: z.number().int(), row: JsonDict }) })]);
export const TableUpdateReq = z.object({ project_id: ProjectId, base_digest: z.string(), updates: z.array(TableUpdateSpec) });
export const TableCreateFromDigestsReq = z.object({ project_id: ProjectId, row_digests: StringList, expected_digest: OptionalString });
export const TableQueryReq = z.object({
  project_id: ProjectId,
  digest: z.string(),
  filter: z.object({ row_digests: StringList.nullish() }).nullish(),
  limit: Limit,
  offset: Offset,
  sort_by: z.array(SortBy).nullish().describe("Dotted paths into the row value"),
});
export const TableQueryStatsReq = z.object({ project_id: ProjectId, digest: z.string() });
export const TableQueryStatsBatchReq = z.object({ project_id: ProjectId, digests: StringList.nullish(), include_storage_size: z.boolean().nullish() });

/* Answers (`docs/api/trace.md#tables`). */

export const TableCreateRes = z.object({ digest: z.string(), row_digests: z.array(z.string()) });
export const TableUpdateRes = z.object({ digest: z.string(), updated_row_digests: z.array(z.string()) });
export const TableCreateFromDigestsRes = z.object({ digest: z.string() });

/** A row as read: its digest, its stored value (the caller's free-form JSON object) and its position in the table. */
export const TableRowRes = z.object({ digest: z.string(), val: z.unknown(), original_index: z.int().min(0) });
export type TableRowResponse = z.output<typeof TableRowRes>;

export const TableQueryRes = z.object({ rows: z.array(TableRowRes) });
export const TableQueryStatsRes = z.object({ count: z.int().min(0) });
export const TableQueryStatsBatchRes = z.object({
  tables: z.array(z.object({ count: z.int().min(0), digest: z.string(), storage_size_bytes: z.int().nullable().describe("Only with include_storage_size") })),
});
