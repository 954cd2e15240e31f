import type { FastifyInstance } from "fastify";
import type { ObjectVersion } from "../../../trace/objects.js";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { ObjCreateReq, ObjCreateRes, ObjDeleteReq, ObjDeleteRes, type ObjDeleteResponse, ObjQueryReq, ObjQueryRes, ObjReadReq, ObjReadRes, type ObjSchemaResponse } from "./protocol.js";

/** `ObjSchema` (`docs/api/trace.md#object-schema`); optional fields are null unless asked for. */
export function objSchemaOf(version: ObjectVersion, options: { includeStorageSize?: boolean; includeTagsAndAliases?: boolean } = {}): ObjSchemaResponse {
  return {
    project_id: version.projectId,
    object_id: version.objectId,
    created_at: version.createdAt,
    deleted_at: version.deletedAt,
    digest: version.digest,
    version_index: version.versionIndex,
    is_latest: version.isLatest ? 1 : 0,
    kind: version.kind,
    base_object_class: version.baseObjectClass,
    leaf_object_class: version.leafObjectClass,
    val: version.val,
    wb_user_id: version.wbUserId,
    size_bytes: options.includeStorageSize ? version.sizeBytes : null,
    tags: options.includeTagsAndAliases ? (version.tags ?? []) : null,
    aliases: options.includeTagsAndAliases ? (version.aliases ?? []) : null,
  };
}

const SORTABLE_FIELDS = new Set(["object_id", "created_at"]);

/** POST /obj/create, /obj/read, /objs/query, /obj/delete (`docs/api/trace.md#objects`). */
export async function objectRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const { objects } = options.trace;
  const common = traceRoute("objects");

  defineRoute(app, { method: "POST", url: "/obj/create", summary: "Create an object version", body: ObjCreateReq, response: ObjCreateRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.obj.project_id);
    const created = await objects.create({
      projectId,
      objectId: body.obj.object_id,
      val: body.obj.val,
      builtinObjectClass: body.obj.builtin_object_class ?? body.obj.set_base_object_class,
      expectedDigest: body.obj.expected_digest,
      wbUserId: traceUserId(request),
    });
    return { digest: created.digest, object_id: created.objectId };
  });

  defineRoute(app, { method: "POST", url: "/obj/read", summary: "Read an object version", body: ObjReadReq, response: ObjReadRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    const includeTagsAndAliases = body.include_tags_and_aliases ?? false;
    const version = await objects.read(projectId, body.object_id, body.digest, { metadataOnly: body.metadata_only ?? false, includeTagsAndAliases });
    return { obj: objSchemaOf(version, { includeTagsAndAliases }) };
  });

  defineRoute(app, { method: "POST", url: "/objs/query", summary: "Query object versions", body: ObjQueryReq, response: ObjQueryRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    const filter = body.filter ?? {};
    const sortBy = (body.sort_by ?? []).filter((sort) => SORTABLE_FIELDS.has(sort.field)) as { field: "object_id" | "created_at"; direction: "asc" | "desc" }[];
    const includeTagsAndAliases = body.include_tags_and_aliases ?? false;
    const versions = await objects.query(projectId, {
      objectIds: filter.object_ids ?? undefined,
      baseObjectClasses: filter.base_object_classes ?? undefined,
      excludeBaseObjectClasses: filter.exclude_base_object_classes ?? undefined,
      leafObjectClasses: filter.leaf_object_classes ?? undefined,
      isOp: filter.is_op ?? undefined,
      latestOnly: filter.latest_only ?? undefined,
      tags: filter.tags ?? undefined,
      aliases: filter.aliases ?? undefined,
      sortBy,
      limit: body.limit ?? undefined,
      offset: body.offset ?? undefined,
      metadataOnly: body.metadata_only ?? false,
      includeTagsAndAliases,
    });
    return { objs: versions.map((version) => objSchemaOf(version, { includeStorageSize: body.include_storage_size ?? false, includeTagsAndAliases })) };
  });

  defineRoute(app, { method: "POST", url: "/obj/delete", summary: "Delete object versions", body: ObjDeleteReq, response: ObjDeleteRes, ...common }, async ({ body }, request): Promise<ObjDeleteResponse> => {
    const { projectId } = resolveProject(request, body.project_id);
    const result = await objects.delete(projectId, body.object_id, body.digests);
    return {
      num_deleted: result.numDeleted,
      deleted_versions: result.deletedVersions.map((version) => ({
        digest: version.digest,
        base_object_class: version.baseObjectClass,
        leaf_object_class: version.leafObjectClass,
      })),
    };
  });
}
