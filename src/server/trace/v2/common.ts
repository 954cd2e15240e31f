import { z } from "zod";
import type { VersionHeader } from "../../../store/trace/v2-resources.js";

/** Path and query pieces of the v2 object API: `/v2/{entity}/{project}/<resource>...` (`spec/trace.md` §4.14). */

export const ProjectPath = z.object({ entity: z.string(), project: z.string() });
export const ObjectPath = ProjectPath.extend({ object_id: z.string() });
export const VersionPath = ObjectPath.extend({ digest: z.string() });

const Count = z.coerce.number().int().min(0).optional();
export const ListQuery = z.object({ limit: Count, offset: Count, eager: z.string().optional().describe("Accepted for compatibility; lists always include their details") });

/** `digests` as repeated parameters or one comma-separated value (the Python client sends both forms). */
export const DeleteQuery = z.object({ digests: z.union([z.string(), z.array(z.string())]).optional() });

export function digestsOf(query: z.output<typeof DeleteQuery>): string[] | undefined {
  if (query.digests === undefined) return undefined;
  const values = (Array.isArray(query.digests) ? query.digests : [query.digests]).flatMap((value) => value.split(","));
  const digests = values.map((value) => value.trim()).filter(Boolean);
  return digests.length > 0 ? digests : undefined;
}

export function pageOf(query: z.output<typeof ListQuery>): { limit?: number; offset?: number } {
  return { limit: query.limit, offset: query.offset };
}

export function headerFields(version: VersionHeader): Record<string, unknown> {
  return { object_id: version.objectId, digest: version.digest, version_index: version.versionIndex, created_at: version.createdAt };
}

export function createdFields(created: { digest: string; objectId: string; versionIndex: number }): Record<string, unknown> {
  return { digest: created.digest, object_id: created.objectId, version_index: created.versionIndex };
}
