import { createHash } from "node:crypto";
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../testing/stores.js";
import { LocalBlobStore } from "./blobs.js";

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
});
