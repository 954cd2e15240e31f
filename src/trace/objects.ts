import { nowTimestamp } from "../store/trace/timestamps.js";
import { isContentDigest, objectDigestOf, versionIndexOf } from "./digest.js";
import { TraceBadRequest, TraceInsertTooLarge, TraceNotFound, TraceObjectDeleted } from "../store/trace/errors.js";
import { parseJsonLossless } from "./json/lossless.js";
import { type ObjectLabelRepository, type ObjectRepository, type ObjectVersionQuery, type ObjectVersionRecord, type VersionSelector, versionKey } from "../store/trace/repository.js";
import { pythonRepr, pythonSetRepr } from "../python-format.js";
import { validateAliasName, validateObjectId, validateTagName } from "./validation.js";

/**
 * Weave's largest storable row is about 4 MiB (ClickHouse refuses bigger inserts, which Weave
 * reports as InsertTooLarge); the same bound applies here to one object version or table row.
 */
export const MAX_STORED_VALUE_BYTES = 4 * 1024 * 1024;
const MAX_DELETE_DIGESTS = 100;

/** One object version as the API shows it (`ObjSchema`, `docs/api/trace.md#object-schema`). */
export interface ObjectVersion {
  projectId: string;
  objectId: string;
  createdAt: string;
  deletedAt: string | null;
  digest: string;
  versionIndex: number;
  isLatest: boolean;
  kind: "op" | "object";
  baseObjectClass: string | null;
  leafObjectClass: string | null;
  val: unknown;
  wbUserId: string | null;
  sizeBytes: number;
  tags?: string[];
  aliases?: string[];
}

export interface CreateObjectInput {
  projectId: string;
  objectId: string;
  val: unknown;
  builtinObjectClass?: string | null;
  expectedDigest?: string | null;
  wbUserId: string | null;
}

export interface ObjectQueryInput extends Omit<ObjectVersionQuery, "includeLatestAlias" | "aliases"> {
  aliases?: string[];
  includeStorageSize?: boolean;
  includeTagsAndAliases?: boolean;
}

export interface DeleteObjectResult {
  numDeleted: number;
  deletedVersions: { digest: string; baseObjectClass: string | null; leafObjectClass: string | null }[];
}

/**
 * Objects with Weave's versioning, aliases, tags and deletion semantics (`docs/api/trace.md#versioning`,
 * `docs/api/trace.md#objects`).
 */
export class ObjectService {
  constructor(
    private readonly objects: ObjectRepository,
    private readonly labels: ObjectLabelRepository,
    private readonly now: () => string = nowTimestamp,
  ) {}

  async create(input: CreateObjectInput): Promise<{ digest: string; objectId: string; versionIndex: number }> {
    validateObjectId(input.objectId);
    const computed = objectDigestOf(input.val, input.builtinObjectClass);
    if (input.expectedDigest && input.expectedDigest !== computed.digest) {
      throw new TraceBadRequest(`Digest mismatch: expected_digest ${input.expectedDigest} does not match the computed digest ${computed.digest}`);
    }
    if (Buffer.byteLength(computed.canonicalJson) > MAX_STORED_VALUE_BYTES) {
      throw new TraceInsertTooLarge(`Database insertion failed. Record too large: object ${input.objectId} is over ${MAX_STORED_VALUE_BYTES} bytes. Store large content as files.`);
    }
    const { versionIndex } = await this.objects.upsertVersion(
      {
        projectId: input.projectId,
        objectId: input.objectId,
        digest: computed.digest,
        kind: computed.kind,
        baseObjectClass: computed.baseObjectClass,
        leafObjectClass: computed.leafObjectClass,
        valDump: computed.canonicalJson,
        wbUserId: input.wbUserId,
      },
      this.now(),
    );
    return { digest: computed.digest, objectId: input.objectId, versionIndex };
  }

  /** Turns a version string (`latest`, `v<N>`, a content digest or a user alias) into a selector. */
  async selectorFor(projectId: string, objectId: string, version: string): Promise<VersionSelector> {
    if (version === "latest") return { latest: true };
    const index = versionIndexOf(version);
    if (index !== undefined) return { versionIndex: index };
    if (isContentDigest(version)) return { digest: version };
    const aliased = await this.labels.findAliasDigest(projectId, objectId, version);
    return { digest: aliased ?? version };
  }

  /** The version, deleted or not; undefined when it never existed. */
  async find(projectId: string, objectId: string, version: string, options: { metadataOnly?: boolean } = {}): Promise<ObjectVersionRecord | undefined> {
    return this.objects.findVersion(projectId, objectId, await this.selectorFor(projectId, objectId, version), options);
  }

  /** The live version; 404 when it does not exist, 404 with `deleted_at` when it was deleted. */
  async requireLive(projectId: string, objectId: string, version: string, options: { metadataOnly?: boolean } = {}): Promise<ObjectVersionRecord> {
    const found = await this.find(projectId, objectId, version, options);
    if (!found) throw new TraceNotFound(`Obj ${objectId}:${version} not found`);
    if (found.deletedAt !== null) throw new TraceObjectDeleted(`${objectId}:v${found.versionIndex} was deleted at ${found.deletedAt}`, found.deletedAt);
    return found;
  }

  async read(projectId: string, objectId: string, version: string, options: { metadataOnly?: boolean; includeTagsAndAliases?: boolean } = {}): Promise<ObjectVersion> {
    const found = await this.requireLive(projectId, objectId, version, options);
    const [view] = await this.present(projectId, [found], { includeTagsAndAliases: options.includeTagsAndAliases ?? false });
    return view as ObjectVersion;
  }

  async query(projectId: string, input: ObjectQueryInput): Promise<ObjectVersion[]> {
    const aliases = input.aliases?.filter((alias) => alias !== "latest");
    const records = await this.objects.queryVersions(projectId, { ...input, aliases, includeLatestAlias: input.aliases?.includes("latest") ?? false });
    return this.present(projectId, records, { includeTagsAndAliases: input.includeTagsAndAliases ?? false });
  }

  async delete(projectId: string, objectId: string, digests?: string[] | null): Promise<DeleteObjectResult> {
    if (digests && digests.length > MAX_DELETE_DIGESTS) {
      throw new TraceBadRequest(`Object delete request contains ${digests.length} objects. Please delete ${MAX_DELETE_DIGESTS} or fewer objects at a time.`);
    }
    const live = await this.objects.queryVersions(projectId, { objectIds: [objectId], metadataOnly: true });
    let targets: ObjectVersionRecord[] = live;
    if (digests && digests.length > 0) {
      const matched = new Map<string, ObjectVersionRecord>();
      const unmatched: string[] = [];
      for (const requested of [...new Set(digests)]) {
        const hit = await this.matchLive(projectId, objectId, requested, live);
        if (hit) matched.set(hit.digest, hit);
        else unmatched.push(requested);
      }
      targets = [...matched.values()];
      if (targets.length > 0 && unmatched.length > 0) {
        throw new TraceNotFound(`Delete request contains ${digests.length} digests, but found ${targets.length} objects to delete. Diff digests: ${pythonSetRepr(unmatched)}`);
      }
    }
    if (targets.length === 0) throw new TraceNotFound(`Object ${objectId} (${pythonRepr(digests)}) not found when deleting.`);
    await this.objects.softDeleteVersions(
      projectId,
      objectId,
      targets.map((target) => target.digest),
      this.now(),
    );
    return {
      numDeleted: targets.length,
      deletedVersions: targets.map((target) => ({ digest: target.digest, baseObjectClass: target.baseObjectClass, leafObjectClass: target.leafObjectClass })),
    };
  }

  private async matchLive(projectId: string, objectId: string, requested: string, live: ObjectVersionRecord[]): Promise<ObjectVersionRecord | undefined> {
    const selector = await this.selectorFor(projectId, objectId, requested);
    if ("latest" in selector) return live.find((version) => version.isLatest);
    if ("versionIndex" in selector) return live.find((version) => version.versionIndex === selector.versionIndex);
    return live.find((version) => version.digest === selector.digest);
  }

  async addTags(projectId: string, objectId: string, version: string, tags: string[]): Promise<void> {
    tags.forEach(validateTagName);
    const target = await this.requireLiveVersion(projectId, objectId, version);
    await this.labels.addTags(projectId, { objectId, digest: target.digest }, [...new Set(tags)], this.now());
  }

  async removeTags(projectId: string, objectId: string, version: string, tags: string[]): Promise<void> {
    const target = await this.find(projectId, objectId, version, { metadataOnly: true });
    if (target) await this.labels.removeTags(projectId, { objectId, digest: target.digest }, [...new Set(tags)]);
  }

  async setAliases(projectId: string, objectId: string, version: string, aliases: string[]): Promise<void> {
    aliases.forEach(validateAliasName);
    const target = await this.requireLiveVersion(projectId, objectId, version);
    await this.labels.setAliases(projectId, { objectId, digest: target.digest }, [...new Set(aliases)], this.now());
  }

  async removeAliases(projectId: string, objectId: string, aliases: string[]): Promise<void> {
    await this.labels.removeAliases(projectId, objectId, [...new Set(aliases)]);
  }

  listTags(projectId: string): Promise<string[]> {
    return this.labels.listTags(projectId);
  }

  listAliases(projectId: string): Promise<string[]> {
    return this.labels.listAliases(projectId);
  }

  private async requireLiveVersion(projectId: string, objectId: string, version: string): Promise<ObjectVersionRecord> {
    const found = await this.find(projectId, objectId, version, { metadataOnly: true });
    if (!found || found.deletedAt !== null) throw new TraceNotFound(`Object version ${objectId}:${version} not found`);
    return found;
  }

  private async present(projectId: string, records: ObjectVersionRecord[], options: { includeTagsAndAliases: boolean }): Promise<ObjectVersion[]> {
    const labels = options.includeTagsAndAliases
      ? await this.labels.labelsOf(
          projectId,
          records.map((record) => record.objectId),
        )
      : undefined;
    return records.map((record) => {
      const view: ObjectVersion = {
        projectId: record.projectId,
        objectId: record.objectId,
        createdAt: record.createdAt,
        deletedAt: record.deletedAt,
        digest: record.digest,
        versionIndex: record.versionIndex,
        isLatest: record.isLatest,
        kind: record.kind,
        baseObjectClass: record.baseObjectClass,
        leafObjectClass: record.leafObjectClass,
        val: record.valDump === null ? {} : parseJsonLossless(record.valDump),
        wbUserId: record.wbUserId,
        sizeBytes: record.sizeBytes,
      };
      if (labels) {
        const found = labels.get(versionKey(record.objectId, record.digest));
        view.tags = found?.tags ?? [];
        view.aliases = record.isLatest ? ["latest", ...(found?.aliases ?? [])] : (found?.aliases ?? []);
      }
      return view;
    });
  }
}
