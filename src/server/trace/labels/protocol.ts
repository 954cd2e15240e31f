import { z } from "zod";
import { ProjectId, StringList } from "../common/schemas.js";

/** Tags on object versions and aliases of objects (`docs/api/trace.md#objects`): requests and answers. */

export const VersionPath = z.object({ object_id: z.string(), digest: z.string() });
export const ObjectPath = z.object({ object_id: z.string() });
export const ProjectQuery = z.object({ project_id: ProjectId });
export const TagsBody = z.object({ project_id: ProjectId, tags: StringList });
export const SetAliasesBody = z.object({ project_id: ProjectId, digest: z.string(), aliases: StringList });
export const RemoveAliasesBody = z.object({ project_id: ProjectId, aliases: StringList });

export const TagsRes = z.object({ tags: z.array(z.string()) });
export const AliasesRes = z.object({ aliases: z.array(z.string()) });
