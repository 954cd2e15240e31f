import { createHash } from "node:crypto";
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../testing/stores.js";
import { LocalBlobStore } from "./blobs.js";
import { openStore } from "./db.js";

describe("LocalBlobStore", () => {
  const dir = makeTempDir();
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("stores content under its sha256 and deduplicates", async () => {
    const blobs = new LocalBlobStore(dir);
    const bytes = new TextEncoder().encode("adapter weights");
    const digest = await blobs.put(bytes);
    expect(digest).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(await blobs.put(bytes)).toBe(digest);
    expect((await blobs.get(digest)).toString()).toBe("adapter weights");
    expect(await blobs.has(digest)).toBe(true);
    expect(fs.readdirSync(`${dir}/blobs/tmp`)).toEqual([]);
    await blobs.delete(digest);
    expect(await blobs.has(digest)).toBe(false);
    expect(() => blobs.localPath("../../etc/passwd")).toThrow(/invalid blob digest/);
  });

  it("creates blobs and the SQLite database (with its -wal and -shm) readable by the owner only", async () => {
    const blobs = new LocalBlobStore(dir);
    const digest = await blobs.put(new TextEncoder().encode("private"));
    expect(fs.statSync(blobs.localPath(digest)).mode & 0o777).toBe(0o600);
    const store = await openStore({ dataDir: dir });
    try {
      await store.db.selectFrom("api_keys").select("id").execute();
      for (const name of ["flywheel.db", "flywheel.db-wal", "flywheel.db-shm"]) expect(fs.statSync(`${dir}/${name}`).mode & 0o777, name).toBe(0o600);
    } finally {
      await store.close();
    }
  });
});
