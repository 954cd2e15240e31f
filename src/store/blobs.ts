import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Content-addressed blobs (checkpoints, artifacts, trace files). Kept behind this interface so an
 * object store (S3) can replace the local directory later.
 */
export interface BlobStore {
  /** Stores bytes; returns their sha256 hex digest. Storing the same bytes twice is a no-op. */
  put(bytes: Uint8Array): Promise<string>;
  get(digest: string): Promise<Buffer>;
  has(digest: string): Promise<boolean>;
  delete(digest: string): Promise<void>;
  /** A local file path for the blob, for readers that memory-map or stream it. */
  localPath(digest: string): string;
}

const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

export class LocalBlobStore implements BlobStore {
  private readonly root: string;
  private readonly tmpDir: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, "blobs");
    this.tmpDir = path.join(this.root, "tmp");
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  localPath(digest: string): string {
    if (!DIGEST_PATTERN.test(digest)) throw new Error(`invalid blob digest '${digest}'`);
    return path.join(this.root, digest.slice(0, 2), digest.slice(2));
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = createHash("sha256").update(bytes).digest("hex");
    const target = this.localPath(digest);
    if (fs.existsSync(target)) return digest;
    // Write beside, sync, then rename: a reader never sees a partial blob, even after a crash.
    const tmp = path.join(this.tmpDir, randomUUID());
    // Owner-only, like the database: blobs hold uploaded data and trained weights.
    const handle = await fs.promises.open(tmp, "w", 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(tmp, target);
    return digest;
  }

  async get(digest: string): Promise<Buffer> {
    return fs.promises.readFile(this.localPath(digest));
  }

  async has(digest: string): Promise<boolean> {
    return fs.existsSync(this.localPath(digest));
  }

  async delete(digest: string): Promise<void> {
    await fs.promises.rm(this.localPath(digest), { force: true });
  }
}
