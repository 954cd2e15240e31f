/**
 * The storage interface of trace objects, tables, files and annotation queues, so that another store
 * can take them over at very large scale. `sql/` implements it on Kysely for SQLite and PostgreSQL;
 * the services beside this file hold Weave's semantics and only talk to these interfaces.
 */

export interface ObjectVersionRecord {
  projectId: string;
  objectId: string;
  digest: string;
  versionIndex: number;
  isLatest: boolean;
  kind: "op" | "object";
  baseObjectClass: string | null;
  leafObjectClass: string | null;
  /** The stored canonical JSON; null when the query asked for metadata only. */
  valDump: string | null;
  sizeBytes: number;
  wbUserId: string | null;
  createdAt: string;
  deletedAt: string | null;
}

export interface NewObjectVersion {
  projectId: string;
  objectId: string;
  digest: string;
  kind: "op" | "object";
  baseObjectClass: string | null;
  leafObjectClass: string | null;
  valDump: string;
  wbUserId: string | null;
}

/** Which version of an object: a content digest, a version index, or the latest live version. */
export type VersionSelector = { digest: string } | { versionIndex: number } | { latest: true };

export interface ObjectVersionQuery {
  objectIds?: string[];
  baseObjectClasses?: string[];
  excludeBaseObjectClasses?: string[];
  leafObjectClasses?: string[];
  isOp?: boolean;
  latestOnly?: boolean;
  /** Versions carrying any of these tags. */
  tags?: string[];
  /** Versions carrying any of these user aliases, or (with `latest`) the latest ones. */
  aliases?: string[];
  includeLatestAlias?: boolean;
  sortBy?: { field: "object_id" | "created_at"; direction: "asc" | "desc" }[];
  limit?: number;
  offset?: number;
  metadataOnly?: boolean;
}

export interface ObjectRepository {
  /**
   * Stores a version: a live version with the same digest makes this a no-op (`created: false`);
   * a deleted one is revived as the newest version. Returns the version's index.
   */
  upsertVersion(version: NewObjectVersion, createdAt: string): Promise<{ versionIndex: number; created: boolean }>;
  /** One version, deleted or not; undefined when it never existed. */
  findVersion(projectId: string, objectId: string, selector: VersionSelector, options?: { metadataOnly?: boolean }): Promise<ObjectVersionRecord | undefined>;
  /** Live versions matching the query, in the requested order. */
  queryVersions(projectId: string, query: ObjectVersionQuery): Promise<ObjectVersionRecord[]>;
  /** Marks versions deleted and hands `latest` to the newest surviving version. */
  softDeleteVersions(projectId: string, objectId: string, digests: string[], deletedAt: string): Promise<void>;
}

export interface ObjectVersionKey {
  objectId: string;
  digest: string;
}

/** The key `labelsOf` uses for one version (object ids never contain a NUL). */
export function versionKey(objectId: string, digest: string): string {
  return `${objectId}\u0000${digest}`;
}

export interface ObjectLabelRepository {
  addTags(projectId: string, key: ObjectVersionKey, tags: string[], createdAt: string): Promise<void>;
  removeTags(projectId: string, key: ObjectVersionKey, tags: string[]): Promise<void>;
  /** Points each alias of the object at `key.digest`, moving it from any other version. */
  setAliases(projectId: string, key: ObjectVersionKey, aliases: string[], createdAt: string): Promise<void>;
  removeAliases(projectId: string, objectId: string, aliases: string[]): Promise<void>;
  findAliasDigest(projectId: string, objectId: string, alias: string): Promise<string | undefined>;
  /** Distinct tags of the project, sorted. */
  listTags(projectId: string): Promise<string[]>;
  /** Distinct aliases of the project, sorted. */
  listAliases(projectId: string): Promise<string[]>;
  /** Tags and aliases of the given objects, keyed `objectId:digest`. */
  labelsOf(projectId: string, objectIds: string[]): Promise<Map<string, { tags: string[]; aliases: string[] }>>;
}

export interface StoredRow {
  digest: string;
  valDump: string;
  sizeBytes: number;
}

export interface TableRepository {
  /** Stores rows content-addressed; rows already present are left alone. */
  insertRows(projectId: string, rows: StoredRow[]): Promise<void>;
  /** Stores a table (its ordered row digests); an existing table with that digest is left alone. */
  insertTable(projectId: string, digest: string, rowDigests: string[], createdAt: string): Promise<void>;
  findTableRowDigests(projectId: string, digest: string): Promise<string[] | undefined>;
  /** The rows with these digests that exist, by digest. */
  findRows(projectId: string, digests: string[]): Promise<Map<string, StoredRow>>;
  /** Which of these row digests exist. */
  existingRowDigests(projectId: string, digests: string[]): Promise<Set<string>>;
  /** Row counts of the tables among `digests` that exist. */
  tableCounts(projectId: string, digests: string[]): Promise<{ digest: string; count: number }[]>;
}

export interface StoredFile {
  digest: string;
  blobSha256: string;
  sizeBytes: number;
}

export interface FileRepository {
  insert(projectId: string, file: StoredFile, createdAt: string): Promise<void>;
  find(projectId: string, digest: string): Promise<StoredFile | undefined>;
  totalSizeBytes(projectId: string): Promise<number>;
}
