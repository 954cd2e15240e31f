import type { Kysely, Selectable } from "kysely";
import { isUniqueViolation } from "../../errors.js";
import type { DialectName } from "../../db.js";
import type { Database } from "../../schema.js";
import type { NewObjectVersion, ObjectRepository, ObjectVersionQuery, ObjectVersionRecord, VersionSelector } from "../repository.js";
import type { TraceObjectsTable } from "../schema.js";
import { byCodePoint } from "../../dialect.js";

/** Concurrent creates of one object race for the next version index; the loser retries. */
const MAX_CREATE_ATTEMPTS = 8;
/** SQLite needs a LIMIT before an OFFSET; this one never binds. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

const METADATA_COLUMNS = ["project_id", "object_id", "digest", "version_index", "is_latest", "kind", "base_object_class", "leaf_object_class", "size_bytes", "wb_user_id", "created_at", "deleted_at"] as const;

type ObjectRow = Omit<Selectable<TraceObjectsTable>, "val_dump"> & { val_dump?: string };

function toRecord(row: ObjectRow): ObjectVersionRecord {
  return {
    projectId: row.project_id,
    objectId: row.object_id,
    digest: row.digest,
    versionIndex: Number(row.version_index),
    isLatest: Number(row.is_latest) === 1,
    kind: row.kind === "op" ? "op" : "object",
    baseObjectClass: row.base_object_class,
    leafObjectClass: row.leaf_object_class,
    valDump: row.val_dump ?? null,
    sizeBytes: Number(row.size_bytes),
    wbUserId: row.wb_user_id,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
  };
}

export class SqlObjectRepository implements ObjectRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  async upsertVersion(version: NewObjectVersion, createdAt: string): Promise<{ versionIndex: number; created: boolean }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => this.upsertInTransaction(trx, version, createdAt));
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= MAX_CREATE_ATTEMPTS) throw error;
      }
    }
  }

  private async upsertInTransaction(trx: Kysely<Database>, version: NewObjectVersion, createdAt: string): Promise<{ versionIndex: number; created: boolean }> {
    const { projectId, objectId, digest } = version;
    const existing = await trx.selectFrom("trace_objects").select(["version_index", "deleted_at"]).where("project_id", "=", projectId).where("object_id", "=", objectId).where("digest", "=", digest).executeTakeFirst();
    if (existing && existing.deleted_at === null) return { versionIndex: Number(existing.version_index), created: false };

    const newest = await trx
      .selectFrom("trace_objects")
      .select((eb) => eb.fn.max("version_index").as("max_index"))
      .where("project_id", "=", projectId)
      .where("object_id", "=", objectId)
      .executeTakeFirst();
    const maxIndex = newest?.max_index;
    const versionIndex = maxIndex === null || maxIndex === undefined ? 0 : Number(maxIndex) + 1;

    await trx.updateTable("trace_objects").set({ is_latest: 0 }).where("project_id", "=", projectId).where("object_id", "=", objectId).where("is_latest", "=", 1).execute();
    const fields = {
      version_index: versionIndex,
      is_latest: 1,
      kind: version.kind,
      base_object_class: version.baseObjectClass,
      leaf_object_class: version.leafObjectClass,
      val_dump: version.valDump,
      size_bytes: Buffer.byteLength(version.valDump),
      wb_user_id: version.wbUserId,
      created_at: createdAt,
      deleted_at: null,
    };
    if (existing) {
      // Re-publishing a deleted digest revives it as the newest version.
      await trx.updateTable("trace_objects").set(fields).where("project_id", "=", projectId).where("object_id", "=", objectId).where("digest", "=", digest).execute();
    } else {
      await trx
        .insertInto("trace_objects")
        .values({ project_id: projectId, object_id: objectId, digest, ...fields })
        .execute();
    }
    return { versionIndex, created: true };
  }

  async findVersion(projectId: string, objectId: string, selector: VersionSelector, options: { metadataOnly?: boolean } = {}): Promise<ObjectVersionRecord | undefined> {
    let query = this.db.selectFrom("trace_objects").select(METADATA_COLUMNS).where("project_id", "=", projectId).where("object_id", "=", objectId);
    if (!options.metadataOnly) query = query.select("val_dump");
    if ("digest" in selector) query = query.where("digest", "=", selector.digest);
    else if ("versionIndex" in selector) query = query.where("version_index", "=", selector.versionIndex);
    // The live latest version; when every version is deleted, the newest one (so callers can tell it was deleted).
    else query = query.orderBy("is_latest", "desc").orderBy("version_index", "desc").limit(1);
    const row = await query.executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async queryVersions(projectId: string, q: ObjectVersionQuery): Promise<ObjectVersionRecord[]> {
    let query = this.db
      .selectFrom("trace_objects as o")
      .select(METADATA_COLUMNS.map((column) => `o.${column}` as const))
      .where("o.project_id", "=", projectId)
      .where("o.deleted_at", "is", null);
    if (!q.metadataOnly) query = query.select("o.val_dump");
    if (q.objectIds?.length) query = query.where("o.object_id", "in", q.objectIds);
    if (q.baseObjectClasses?.length) query = query.where("o.base_object_class", "in", q.baseObjectClasses);
    if (q.excludeBaseObjectClasses?.length) {
      const excluded = q.excludeBaseObjectClasses;
      query = query.where((eb) => eb.or([eb("o.base_object_class", "is", null), eb("o.base_object_class", "not in", excluded)]));
    }
    if (q.leafObjectClasses?.length) query = query.where("o.leaf_object_class", "in", q.leafObjectClasses);
    if (q.isOp === true) query = query.where("o.kind", "=", "op");
    if (q.isOp === false) query = query.where("o.kind", "!=", "op");
    if (q.latestOnly) query = query.where("o.is_latest", "=", 1);
    if (q.tags?.length) {
      const tags = q.tags;
      query = query.where((eb) =>
        eb.exists(eb.selectFrom("trace_object_tags as t").select("t.tag").whereRef("t.project_id", "=", "o.project_id").whereRef("t.object_id", "=", "o.object_id").whereRef("t.digest", "=", "o.digest").where("t.tag", "in", tags)),
      );
    }
    if (q.aliases?.length || q.includeLatestAlias) {
      const aliases = q.aliases ?? [];
      query = query.where((eb) => {
        const conditions = [];
        if (q.includeLatestAlias) conditions.push(eb("o.is_latest", "=", 1));
        if (aliases.length > 0) {
          conditions.push(
            eb.exists(
              eb
                .selectFrom("trace_object_aliases as a")
                .select("a.alias")
                .whereRef("a.project_id", "=", "o.project_id")
                .whereRef("a.object_id", "=", "o.object_id")
                .whereRef("a.digest", "=", "o.digest")
                .where("a.alias", "in", aliases),
            ),
          );
        }
        return eb.or(conditions);
      });
    }
    const sorts = q.sortBy?.length ? q.sortBy : [{ field: "created_at" as const, direction: "asc" as const }];
    for (const sort of sorts) query = query.orderBy(byCodePoint(this.dialect, `o.${sort.field}`), sort.direction);
    query = query.orderBy("o.version_index", "asc");
    if (q.limit !== undefined || q.offset !== undefined) query = query.limit(q.limit ?? NO_LIMIT);
    if (q.offset !== undefined) query = query.offset(q.offset);
    const rows = await query.execute();
    return rows.map((row) => toRecord(row as ObjectRow));
  }

  async softDeleteVersions(projectId: string, objectId: string, digests: string[], deletedAt: string): Promise<void> {
    if (digests.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("trace_objects")
        .set({ deleted_at: deletedAt, is_latest: 0 })
        .where("project_id", "=", projectId)
        .where("object_id", "=", objectId)
        .where("digest", "in", digests)
        .where("deleted_at", "is", null)
        .execute();
      const newest = await trx
        .selectFrom("trace_objects")
        .select(["digest", "is_latest"])
        .where("project_id", "=", projectId)
        .where("object_id", "=", objectId)
        .where("deleted_at", "is", null)
        .orderBy("version_index", "desc")
        .limit(1)
        .executeTakeFirst();
      if (newest && Number(newest.is_latest) !== 1) {
        await trx.updateTable("trace_objects").set({ is_latest: 1 }).where("project_id", "=", projectId).where("object_id", "=", objectId).where("digest", "=", newest.digest).execute();
      }
    });
  }
}
