import { z } from "zod";

/** Request pieces every preview resource shares: names, cursor pages (`docs/api/training.md#cursor-pages`). */

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const nameField = (what: string) => z.string().regex(NAME_PATTERN, `${what} must start with a letter or digit and use only letters, digits, '_', '.', '-' (at most 128)`);

export const CursorLimit = z.coerce.number().int().min(1).max(100).default(20);

export const cursorPageOf = <T extends z.ZodType>(item: T) => z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean(), first_id: z.string(), last_id: z.string() });
