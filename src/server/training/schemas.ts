import { z } from "zod";

/** Request and response schemas of the preview model registry (`spec/training.md` §2.1–2.5). */

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const nameField = (what: string) =>
  z.string().regex(NAME_PATTERN, `${what} must start with a letter or digit and use only letters, digits, '_', '.', '-' (at most 128)`);

export const ModelCreateReq = z.object({
  entity: z.string().nullish().describe("Entity that owns the model; null means the caller's entity"),
  project: nameField("project"),
  name: nameField("name").describe("Unique within the project"),
  base_model: z.string().min(1).describe("A base model id this service serves"),
  return_existing: z.boolean().default(false).describe("Return the existing model instead of 409 when the name is taken"),
});

export const ModelRes = z.object({
  id: z.uuid(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullable(),
  created_at: z.string(),
});

export const ModelIdParams = z.object({ model_id: z.uuid() });

export const ModelDeleteRes = z.object({ model_id: z.uuid(), deleted_checkpoints: z.number().int(), deleted_run: z.boolean() });

export const CursorLimit = z.coerce.number().int().min(1).max(100).default(20);

export const CheckpointListQuery = z.object({
  after: z.string().optional().describe("Id of the last item of the previous page"),
  limit: CursorLimit,
  order: z.enum(["asc", "desc"]).default("asc"),
});

export const CheckpointItem = z.object({ id: z.uuid(), step: z.number().int(), metrics: z.record(z.string(), z.number()) });

export const cursorPageOf = <T extends z.ZodType>(item: T) =>
  z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean(), first_id: z.string(), last_id: z.string() });

export const CheckpointDeleteReq = z.object({ steps: z.array(z.number().int().min(0)) });

export const CheckpointDeleteRes = z.object({ deleted_count: z.number().int(), not_found_steps: z.array(z.number().int()) });
