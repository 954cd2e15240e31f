import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { nowIso } from "./time.js";
import type { ApiKeyRole, ApiKeysTable, Database } from "./schema.js";

const ENTITY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function isValidEntityName(entity: string): boolean {
  return ENTITY_PATTERN.test(entity);
}

/** 32 random bytes, URL-safe; the `fw_` prefix makes a leaked key easy to recognise. */
export function generateApiKey(): string {
  return `fw_${randomBytes(32).toString("base64url")}`;
}

/** Keys carry 256 bits of entropy, so a plain sha256 is enough; no slow hash is needed. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface ApiKeyInfo {
  id: string;
  entity: string;
  name: string | null;
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
  role: ApiKeyRole;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The secret; returned once, never stored. */
  key: string;
}

/**
 * A worker key (`role: "worker"`) belongs to no entity's data: it lets an external trainer take
 * any entity's jobs through the worker protocol and nothing else. Its entity is recorded only to
 * say who made it.
 */
export async function createApiKey(db: Kysely<Database>, entity: string, options: { name?: string; key?: string; role?: ApiKeyRole } = {}): Promise<CreatedApiKey> {
  if (!isValidEntityName(entity)) {
    throw new Error(`invalid entity name '${entity}': use letters, digits, '_', '.', '-' (at most 64)`);
  }
  const key = options.key ?? generateApiKey();
  const row: ApiKeysTable = {
    id: randomUUID(),
    entity,
    name: options.name ?? null,
    key_hash: hashApiKey(key),
    key_prefix: key.slice(0, 10),
    created_at: nowIso(),
    revoked_at: null,
    role: options.role ?? "user",
  };
  await db.insertInto("api_keys").values(row).execute();
  const { key_hash: _hash, ...info } = row;
  return { ...info, key };
}

/** Makes sure `key` is a live key of `entity` (used for `FLYWHEEL_API_KEY`). */
export async function ensureApiKey(db: Kysely<Database>, key: string, entity: string): Promise<void> {
  const existing = await db.selectFrom("api_keys").select(["id", "entity", "revoked_at", "role"]).where("key_hash", "=", hashApiKey(key)).executeTakeFirst();
  if (!existing) {
    await createApiKey(db, entity, { key, name: "FLYWHEEL_API_KEY" });
    return;
  }
  if (existing.role !== "user") throw new Error("FLYWHEEL_API_KEY is a worker key; it cannot be the API key of entity 'default'");
  if (existing.entity !== entity) {
    throw new Error(`FLYWHEEL_API_KEY already belongs to entity '${existing.entity}', not '${entity}'`);
  }
  if (existing.revoked_at !== null) {
    await db.updateTable("api_keys").set({ revoked_at: null }).where("id", "=", existing.id).execute();
  }
}

export interface Principal {
  entity: string;
  keyId: string;
  role: ApiKeyRole;
}

/** The live key matching `key`, or undefined for an unknown or revoked key. */
export async function authenticateApiKey(db: Kysely<Database>, key: string): Promise<Principal | undefined> {
  const row = await db.selectFrom("api_keys").select(["id", "entity", "role"]).where("key_hash", "=", hashApiKey(key)).where("revoked_at", "is", null).executeTakeFirst();
  return row ? { entity: row.entity, keyId: row.id, role: row.role } : undefined;
}

export async function listApiKeys(db: Kysely<Database>, entity?: string): Promise<ApiKeyInfo[]> {
  let query = db.selectFrom("api_keys").select(["id", "entity", "name", "key_prefix", "created_at", "revoked_at", "role"]).orderBy("created_at").orderBy("id");
  if (entity) query = query.where("entity", "=", entity);
  return query.execute();
}

export async function countLiveApiKeys(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("revoked_at", "is", null)
    .where("role", "=", "user")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Revokes the key with this id or key prefix; returns the revoked key, if one matched. */
export async function revokeApiKey(db: Kysely<Database>, idOrPrefix: string): Promise<ApiKeyInfo | undefined> {
  const matches = await db
    .selectFrom("api_keys")
    .select(["id", "entity", "name", "key_prefix", "created_at", "revoked_at", "role"])
    .where((eb) => eb.or([eb("id", "=", idOrPrefix), eb("key_prefix", "=", idOrPrefix.slice(0, 10))]))
    .execute();
  if (matches.length > 1) throw new Error(`'${idOrPrefix}' matches ${matches.length} keys; revoke by id`);
  const match = matches[0];
  if (!match) return undefined;
  const revokedAt = match.revoked_at ?? nowIso();
  await db.updateTable("api_keys").set({ revoked_at: revokedAt }).where("id", "=", match.id).execute();
  return { ...match, revoked_at: revokedAt };
}

/**
 * The user name of each of these key ids (revoked keys included: their calls stay theirs). A key
 * stands for its entity, so the name is the entity's; unknown ids are left out.
 */
export async function usernamesOfKeyIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom("api_keys").select(["id", "entity"]).where("id", "in", unique).execute();
  return new Map(rows.map((row) => [row.id, row.entity]));
}
