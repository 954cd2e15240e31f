import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { type ArtifactFile, createArtifactVersion } from "../../../store/artifacts.js";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { formatArtifactUrl } from "./artifact-url.js";
import { nameField } from "../common/schemas.js";

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/;
// A plain character class: a grouped pattern overflows the regex stack on multi-megabyte input.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const ArtifactFileReq = z
  .object({
    name: z.string().regex(FILE_NAME, "file names use letters, digits, '_', '.', '-' (at most 255, no folders)"),
    text: z.string().optional().describe("The file's content as UTF-8 text"),
    base64: z
      .string()
      .refine((value) => value.length % 4 === 0 && BASE64.test(value), "not valid base64")
      .optional()
      .describe("The file's content, base64-encoded"),
  })
  .superRefine((file, ctx) => {
    if ((file.text === undefined) === (file.base64 === undefined)) ctx.addIssue({ code: "custom", path: ["text"], message: "give exactly one of text or base64" });
  });

export const ArtifactCreateReq = z
  .object({
    entity: z.string().nullish().describe("Must be the caller's entity; null means the caller's"),
    project: nameField("project"),
    name: nameField("name"),
    type: z
      .string()
      .min(1)
      .max(64)
      .refine((type) => !type.includes("\u0000"), { message: "must not contain a NUL character (\\u0000)" })
      .default("dataset"),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((metadata) => !JSON.stringify(metadata).includes("\\u0000"), { message: "must not contain a NUL character (\\u0000) in a key or a string" })
      .default({}),
    files: z.array(ArtifactFileReq).min(1),
  })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.files.forEach((file, index) => {
      if (seen.has(file.name)) ctx.addIssue({ code: "custom", path: ["files", index, "name"], message: `file '${file.name}' is given twice` });
      seen.add(file.name);
    });
  });

export const ArtifactRes = z.object({
  id: z.uuid(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  version: z.string().describe("vN"),
  type: z.string(),
  url: z.string().describe("The training_data_url of this version"),
  files: z.array(z.object({ name: z.string(), size: z.number().int(), digest: z.string() })),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

/**
 * The artifact store for SFT data (docs/api/training.md#sft-jobs): each upload of (entity, project, name)
 * becomes the next version v0, v1, …; its files are stored as blobs.
 */
export async function artifactRoutes(app: FastifyInstance): Promise<void> {
  const { store, blobs } = app.services;
  defineRoute(
    app,
    { method: "POST", url: "/preview/artifacts", summary: "Upload a new version of an artifact (SFT training data)", tags: ["training"], body: ArtifactCreateReq, response: ArtifactRes, security: "bearer" },
    async ({ body }, request) => {
      const { entity } = principalOf(request);
      if (body.entity && body.entity !== entity) {
        throw new ApiError(403, `This API key belongs to entity '${entity}' and cannot upload artifacts for entity '${body.entity}'`);
      }
      const files: Record<string, ArtifactFile> = {};
      for (const file of body.files) {
        const bytes = file.text !== undefined ? Buffer.from(file.text, "utf8") : Buffer.from(file.base64!, "base64");
        files[file.name] = { digest: await blobs.put(bytes), size: bytes.length };
      }
      const artifact = await createArtifactVersion(store.db, { entity, project: body.project, name: body.name, type: body.type, files, metadata: body.metadata });
      return {
        id: artifact.id,
        entity: artifact.entity,
        project: artifact.project,
        name: artifact.name,
        version: `v${artifact.version}`,
        type: artifact.type,
        url: formatArtifactUrl(artifact),
        files: Object.entries(artifact.files).map(([name, file]) => ({ name, size: file.size, digest: file.digest })),
        metadata: artifact.metadata,
        created_at: artifact.created_at,
      };
    },
  );
}
