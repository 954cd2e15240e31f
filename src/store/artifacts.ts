import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { isUniqueViolation } from "./errors.js";
import { decodeJson, encodeJson } from "./json.js";
import type { ArtifactsTable, Database } from "./schema.js";
import { nowIso } from "./time.js";

/** A stored file of an artifact: its blob and size in bytes. */
export interface ArtifactFile {
  digest: string;
  size: number;
}

export interface Artifact {
  id: string;
  entity: string;
  project: string;
  name: string;
  version: number;
  type: string;
  files: Record<string, ArtifactFile>;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface NewArtifactVersion {
  entity: string;
  project: string;
  name: string;
  type: string;
  files: Record<string, ArtifactFile>;
  metadata: Record<string, unknown>;
}

const MAX_INSERT_ATTEMPTS = 8;

function toArtifact(row: ArtifactsTable): Artifact {
  return { ...row, files: decodeJson<Record<string, ArtifactFile>>(row.files), metadata: decodeJson<Record<string, unknown>>(row.metadata) };
}

/** Stores the next version (v0, v1, …) of the named artifact; the file blobs must already be stored. */
export async function createArtifactVersion(db: Kysely<Database>, input: NewArtifactVersion): Promise<Artifact> {
  for (let attempt = 0; ; attempt++) {
    const last = await db
      .selectFrom("artifacts")
      .select((eb) => eb.fn.max("version").as("version"))
      .where("entity", "=", input.entity)
      .where("project", "=", input.project)
      .where("name", "=", input.name)
      .executeTakeFirst();
    const row: ArtifactsTable = {
      id: randomUUID(),
      entity: input.entity,
      project: input.project,
      name: input.name,
      version: last?.version === null || last?.version === undefined ? 0 : Number(last.version) + 1,
      type: input.type,
      files: encodeJson(input.files),
      metadata: encodeJson(input.metadata),
      created_at: nowIso(),
    };
    try {
      await db.insertInto("artifacts").values(row).execute();
      return toArtifact(row);
    } catch (error) {
      // A concurrent upload took this version number: take the next one.
      if (!isUniqueViolation(error) || attempt + 1 >= MAX_INSERT_ATTEMPTS) throw error;
    }
  }
}

/** A version of the named artifact, or its latest when `version` is "latest". */
export async function findArtifactVersion(db: Kysely<Database>, ref: { entity: string; project: string; name: string; version: number | "latest" }): Promise<Artifact | undefined> {
  let query = db.selectFrom("artifacts").selectAll().where("entity", "=", ref.entity).where("project", "=", ref.project).where("name", "=", ref.name);
  query = ref.version === "latest" ? query.orderBy("version", "desc").limit(1) : query.where("version", "=", ref.version);
  const row = await query.executeTakeFirst();
  return row ? toArtifact(row) : undefined;
}
