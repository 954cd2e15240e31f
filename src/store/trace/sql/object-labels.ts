import type { Kysely } from "kysely";
import type { Database } from "../../schema.js";
import { compareByCodePoint } from "../../../python-format.js";
import { chunked } from "../../dialect.js";
import { type ObjectLabelRepository, type ObjectVersionKey, versionKey } from "../repository.js";

export class SqlObjectLabelRepository implements ObjectLabelRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async addTags(projectId: string, key: ObjectVersionKey, tags: string[], createdAt: string): Promise<void> {
    if (tags.length === 0) return;
    await this.db
      .insertInto("trace_object_tags")
      .values(tags.map((tag) => ({ project_id: projectId, object_id: key.objectId, digest: key.digest, tag, created_at: createdAt })))
      .onConflict((oc) => oc.columns(["project_id", "object_id", "digest", "tag"]).doNothing())
      .execute();
  }

  async removeTags(projectId: string, key: ObjectVersionKey, tags: string[]): Promise<void> {
    if (tags.length === 0) return;
    await this.db.deleteFrom("trace_object_tags").where("project_id", "=", projectId).where("object_id", "=", key.objectId).where("digest", "=", key.digest).where("tag", "in", tags).execute();
  }

  async setAliases(projectId: string, key: ObjectVersionKey, aliases: string[], createdAt: string): Promise<void> {
    if (aliases.length === 0) return;
    await this.db
      .insertInto("trace_object_aliases")
      .values(aliases.map((alias) => ({ project_id: projectId, object_id: key.objectId, alias, digest: key.digest, created_at: createdAt })))
      .onConflict((oc) => oc.columns(["project_id", "object_id", "alias"]).doUpdateSet({ digest: key.digest, created_at: createdAt }))
      .execute();
  }

  async removeAliases(projectId: string, objectId: string, aliases: string[]): Promise<void> {
    if (aliases.length === 0) return;
    await this.db.deleteFrom("trace_object_aliases").where("project_id", "=", projectId).where("object_id", "=", objectId).where("alias", "in", aliases).execute();
  }

  async findAliasDigest(projectId: string, objectId: string, alias: string): Promise<string | undefined> {
    const row = await this.db.selectFrom("trace_object_aliases").select("digest").where("project_id", "=", projectId).where("object_id", "=", objectId).where("alias", "=", alias).executeTakeFirst();
    return row?.digest;
  }

  async listTags(projectId: string): Promise<string[]> {
    const rows = await this.db.selectFrom("trace_object_tags").select("tag").distinct().where("project_id", "=", projectId).execute();
    return rows.map((row) => row.tag).sort(compareByCodePoint);
  }

  async listAliases(projectId: string): Promise<string[]> {
    const rows = await this.db.selectFrom("trace_object_aliases").select("alias").distinct().where("project_id", "=", projectId).execute();
    return rows.map((row) => row.alias).sort(compareByCodePoint);
  }

  async labelsOf(projectId: string, objectIds: string[]): Promise<Map<string, { tags: string[]; aliases: string[] }>> {
    const labels = new Map<string, { tags: string[]; aliases: string[] }>();
    if (objectIds.length === 0) return labels;
    const entry = (objectId: string, digest: string) => {
      const key = versionKey(objectId, digest);
      let found = labels.get(key);
      if (!found) {
        found = { tags: [], aliases: [] };
        labels.set(key, found);
      }
      return found;
    };
    const ids = [...new Set(objectIds)];
    for (const chunk of chunked(ids)) {
      const tags = await this.db.selectFrom("trace_object_tags").select(["object_id", "digest", "tag"]).where("project_id", "=", projectId).where("object_id", "in", chunk).execute();
      for (const row of tags) entry(row.object_id, row.digest).tags.push(row.tag);
      const aliases = await this.db.selectFrom("trace_object_aliases").select(["object_id", "digest", "alias"]).where("project_id", "=", projectId).where("object_id", "in", chunk).execute();
      for (const row of aliases) entry(row.object_id, row.digest).aliases.push(row.alias);
    }
    for (const found of labels.values()) {
      found.tags.sort(compareByCodePoint);
      found.aliases.sort(compareByCodePoint);
    }
    return labels;
  }
}
