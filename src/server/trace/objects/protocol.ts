import { z } from "zod";
import { Limit, Offset, OptionalString, ProjectId, RequiredJson, SortBy, StringList } from "../common/schemas.js";

/** Requests of the object endpoints (`docs/api/trace.md#objects`); unknown fields are ignored, as Weave does. */
export const ObjCreateReq = z.object({
  obj: z.object({
    project_id: ProjectId,
    object_id: z.string(),
    val: RequiredJson,
    builtin_object_class: OptionalString,
    set_base_object_class: OptionalString.describe("Deprecated alias of builtin_object_class"),
    expected_digest: OptionalString,
  }),
});

export const ObjReadReq = z.object({
  project_id: ProjectId,
  object_id: z.string(),
  digest: z.string().describe("A content digest, 'latest', 'v<N>' or an alias"),
  metadata_only: z.boolean().nullish(),
  include_tags_and_aliases: z.boolean().nullish(),
});

const ObjectVersionFilter = z.object({
  base_object_classes: StringList.nullish(),
  exclude_base_object_classes: StringList.nullish(),
  leaf_object_classes: StringList.nullish(),
  object_ids: StringList.nullish(),
  is_op: z.boolean().nullish(),
  latest_only: z.boolean().nullish(),
  tags: StringList.nullish(),
  aliases: StringList.nullish(),
});

export const ObjQueryReq = z.object({
  project_id: ProjectId,
  filter: ObjectVersionFilter.nullish(),
  limit: Limit,
  offset: Offset,
  sort_by: z.array(SortBy).nullish().describe("Only object_id and created_at are honoured"),
  metadata_only: z.boolean().nullish(),
  include_storage_size: z.boolean().nullish(),
  include_tags_and_aliases: z.boolean().nullish(),
});

export const ObjDeleteReq = z.object({ project_id: ProjectId, object_id: z.string(), digests: StringList.nullish() });

/* Answers (`docs/api/trace.md#objects`). */

export const ObjCreateRes = z.object({ digest: z.string(), object_id: z.string() });

/** `ObjSchema` (`docs/api/trace.md#object-schema`): `val` is the stored value; optional fields are null unless asked for. */
export const ObjSchemaRes = z.object({
  project_id: z.string(),
  object_id: z.string(),
  created_at: z.string(),
  deleted_at: z.string().nullable(),
  digest: z.string(),
  version_index: z.int().min(0),
  is_latest: z.union([z.literal(0), z.literal(1)]),
  kind: z.enum(["op", "object"]),
  base_object_class: z.string().nullable(),
  leaf_object_class: z.string().nullable(),
  val: z.unknown().describe("The stored value ({} with metadata_only)"),
  wb_user_id: z.string().nullable(),
  size_bytes: z.int().nullable().describe("Only with include_storage_size"),
  tags: z.array(z.string()).nullable().describe("Only with include_tags_and_aliases"),
  aliases: z.array(z.string()).nullable().describe("Only with include_tags_and_aliases"),
});
export type ObjSchemaResponse = z.output<typeof ObjSchemaRes>;

export const ObjReadRes = z.object({ obj: ObjSchemaRes });
export const ObjQueryRes = z.object({ objs: z.array(ObjSchemaRes) });

export const ObjDeleteRes = z.object({
  num_deleted: z.int().min(0),
  deleted_versions: z.array(z.object({ digest: z.string(), base_object_class: z.string().nullable(), leaf_object_class: z.string().nullable() })),
});
export type ObjDeleteResponse = z.output<typeof ObjDeleteRes>;
