import { z } from "zod";
import { ProjectId } from "../common/schemas.js";

/** POST /image/create (`docs/api/trace.md#images`): request and answer. */

export const ImageCreateReq = z.object({
  project_id: ProjectId,
  inputs: z.object({ model: z.string(), prompt: z.string(), n: z.number().int().min(1).nullish() }),
  track_llm_call: z.boolean().default(true),
});

export const ImageCreateRes = z.object({
  response: z.record(z.string(), z.unknown()).describe("The image provider's answer, as it gave it"),
  weave_call_id: z.string().optional().describe("The call that records the generation, unless track_llm_call is false"),
});
