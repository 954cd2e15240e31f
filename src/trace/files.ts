import type { BlobStore } from "../store/blobs.js";
import { nowTimestamp } from "../store/trace/timestamps.js";
import { bytesDigest } from "./digest.js";
import { TraceBadRequest, TraceNotFound } from "../store/trace/errors.js";
import type { FileRepository } from "../store/trace/repository.js";

/** Trace files (`docs/api/trace.md#files`): bytes in the blob store, named per project by Weave's file digest. */
export class FileService {
  constructor(
    private readonly files: FileRepository,
    private readonly blobs: BlobStore,
    private readonly now: () => string = nowTimestamp,
  ) {}

  async create(projectId: string, content: Uint8Array, expectedDigest?: string | null): Promise<{ digest: string }> {
    const digest = bytesDigest(content);
    if (expectedDigest && expectedDigest !== digest) {
      throw new TraceBadRequest(`Digest mismatch: expected_digest ${expectedDigest} does not match the computed digest ${digest}`);
    }
    const blobSha256 = await this.blobs.put(content);
    await this.files.insert(projectId, { digest, blobSha256, sizeBytes: content.byteLength }, this.now());
    return { digest };
  }

  async read(projectId: string, digest: string): Promise<Buffer> {
    const file = await this.files.find(projectId, digest);
    if (!file) throw new TraceNotFound(`File ${digest} not found`);
    return this.blobs.get(file.blobSha256);
  }

  /** The file's text, or undefined when it does not exist (ops and models keep their source as a file). */
  async readText(projectId: string, digest: string): Promise<string | undefined> {
    const file = await this.files.find(projectId, digest);
    return file ? (await this.blobs.get(file.blobSha256)).toString("utf8") : undefined;
  }

  totalSizeBytes(projectId: string): Promise<number> {
    return this.files.totalSizeBytes(projectId);
  }
}
