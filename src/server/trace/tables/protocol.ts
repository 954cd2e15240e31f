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
