import { z } from "zod";

/** `GET /v1/models`'s answer, OpenAI's list shape with vLLM's `root` and `parent` (`docs/api/chat.md#models`). */

const ModelCard = z.object({
  id: z.string().describe("What `model` takes to use it"),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.string().describe("`flywheel` for built-in base models, `upstream` for forwarded ones, else the owning entity"),
  root: z.string().describe("The base model, or for a runtime adapter its directory"),
  parent: z.string().nullable().describe("The base model a trained or loaded adapter runs on; null for base models"),
});
export type ModelCard = z.output<typeof ModelCard>;

export const ModelListRes = z.object({ object: z.literal("list"), data: z.array(ModelCard) });
export type ModelListResponse = z.output<typeof ModelListRes>;
