import { z } from "zod";
import { ProjectId } from "../common/schemas.js";

/** Files (`docs/api/trace.md#files`): requests and answers. The upload itself is multipart/form-data (project_id, file, expected_digest?). */

export const FileContentReq = z.object({ project_id: ProjectId, digest: z.string() });
export const FilesStatsReq = z.object({ project_id: ProjectId });

export const FileCreateRes = z.object({ digest: z.string().describe("The content's digest: the file's id") });
export const FilesStatsRes = z.object({ total_size_bytes: z.int().min(0) });

/** The download answers the stored bytes as they are. */
export const FILE_CONTENT = { mediaType: "application/octet-stream", description: "The file's bytes" };
