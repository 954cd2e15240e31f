import type { Kysely } from "kysely";
import type { Database } from "../../schema.js";
import type { FileRepository, StoredFile } from "../repository.js";

/** File metadata per project; the bytes live in the blob store under their hex sha256. */
export class SqlFileRepository implements FileRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(projectId: string, file: StoredFile, createdAt: string): Promise<void> {
    await this.db
      .insertInto("trace_files")
      .values({ project_id: projectId, digest: file.digest, blob_sha256: file.blobSha256, size_bytes: file.sizeBytes, created_at: createdAt })
      .onConflict((oc) => oc.columns(["project_id", "digest"]).doNothing())
      .execute();
  }

  async find(projectId: string, digest: string): Promise<StoredFile | undefined> {
    const row = await this.db.selectFrom("trace_files").select(["digest", "blob_sha256", "size_bytes"]).where("project_id", "=", projectId).where("digest", "=", digest).executeTakeFirst();
    return row ? { digest: row.digest, blobSha256: row.blob_sha256, sizeBytes: Number(row.size_bytes) } : undefined;
  }

  async totalSizeBytes(projectId: string): Promise<number> {
    const row = await this.db
      .selectFrom("trace_files")
      .select((eb) => eb.fn.sum<number | string | null>("size_bytes").as("total"))
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }
}
