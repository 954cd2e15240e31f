import { z } from "zod";
import type { VersionHeader } from "../../../trace/v2-resources.js";

/**
 * Path and query pieces of the v2 object API: `/v2/{entity}/{project}/<resource>...`
 * (`docs/api/trace.md#v2-objects`).
 */

export const ProjectPath = z.object({ entity: z.string(), project: z.string() });
export const ObjectPath = ProjectPath.extend({ object_id: z.string() });
export const VersionPath = ObjectPath.extend({ digest: z.string() });

const Count = z.coerce.number().int().min(0).optional();
export const ListQuery = z.object({ limit: Count, offset: Count, eager: z.string().optional().describe("Accepted for compatibility; lists always include their details") });

/** A list query parameter, sent as repeated parameters or one comma-separated value (the Python client sends both forms). */
export const ListParam = z.union([z.string(), z.array(z.string())]).optional();

export function listParam(value: z.output<typeof ListParam>): string[] | undefined {
  if (value === undefined) return undefined;
  const items = (Array.isArray(value) ? value : [value])
    .flatMap((item) => item.split(","))
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

export const DeleteQuery = z.object({ digests: ListParam });

export function digestsOf(query: z.output<typeof DeleteQuery>): string[] | undefined {
  return listParam(query.digests);
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
