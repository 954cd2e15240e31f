import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../testing/stores.js";
import { authenticateApiKey, countLiveApiKeys, createApiKey, ensureApiKey, hashApiKey, listApiKeys, revokeApiKey } from "./keys.js";

describe.each(testDialects)("API keys on %s", (dialect) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await openTestStore(dialect);
  });
  afterEach(async () => {
    await store.close();
  });

  it("stores only a hash and authenticates the key", async () => {
    const created = await createApiKey(store.db, "team-a", { name: "ci" });
    expect(created.key).toMatch(/^fw_[A-Za-z0-9_-]{43}$/);
    const rows = await store.db.selectFrom("api_keys").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(created.key);
    expect(rows[0]?.key_hash).toBe(hashApiKey(created.key));
    expect(await authenticateApiKey(store.db, created.key)).toEqual({ entity: "team-a", keyId: created.id, role: "user" });
    expect(await authenticateApiKey(store.db, `${created.key}x`)).toBeUndefined();
  });

  it("makes worker keys, which do not count as an entity's key", async () => {
    const worker = await createApiKey(store.db, "default", { role: "worker" });
    expect(await authenticateApiKey(store.db, worker.key)).toEqual({ entity: "default", keyId: worker.id, role: "worker" });
    expect(await countLiveApiKeys(store.db)).toBe(0);
    await expect(ensureApiKey(store.db, worker.key, "default")).rejects.toThrow(/worker key/);
  });

  it("revokes by id or prefix", async () => {
    const first = await createApiKey(store.db, "team-a");
    const second = await createApiKey(store.db, "team-a");
    expect((await revokeApiKey(store.db, first.id))?.id).toBe(first.id);
    expect((await revokeApiKey(store.db, second.key_prefix))?.id).toBe(second.id);
    expect(await authenticateApiKey(store.db, first.key)).toBeUndefined();
    expect(await authenticateApiKey(store.db, second.key)).toBeUndefined();
    expect(await countLiveApiKeys(store.db)).toBe(0);
    expect(await revokeApiKey(store.db, "nothing-like-it")).toBeUndefined();
    const listed = await listApiKeys(store.db, "team-a");
    expect(listed.every((key) => key.revoked_at !== null)).toBe(true);
  });

  it("ensures a configured key exists for its entity, reviving it when revoked", async () => {
    const key = "configured-key-0123456789";
    await ensureApiKey(store.db, key, "default");
    await ensureApiKey(store.db, key, "default");
    expect(await listApiKeys(store.db)).toHaveLength(1);
    await revokeApiKey(store.db, (await listApiKeys(store.db))[0]!.id);
    await ensureApiKey(store.db, key, "default");
    expect(await authenticateApiKey(store.db, key)).toMatchObject({ entity: "default" });
    await expect(ensureApiKey(store.db, key, "other")).rejects.toThrow(/belongs to entity 'default'/);
  });

  it("rejects entity names that cannot appear in model URLs", async () => {
    await expect(createApiKey(store.db, "has/slash")).rejects.toThrow(/invalid entity name/);
    await expect(createApiKey(store.db, "")).rejects.toThrow(/invalid entity name/);
  });
});
