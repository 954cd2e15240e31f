import { z } from "zod";

/** vLLM's dynamic LoRA requests; both answer a plain-text success line (`docs/api/chat.md#lora-adapters`). */

export const LoadLoraReq = z.object({
  lora_name: z.string().min(1).max(256),
  lora_path: z.string().min(1),
  load_inplace: z.boolean().default(false).describe("Replace an adapter already loaded under this name"),
});

export const UnloadLoraReq = z.object({ lora_name: z.string().min(1), lora_int_id: z.number().int().nullish() });

/** Both answer a sentence of plain text, as vLLM does. */
export const LORA_ANSWER = { mediaType: "text/plain", description: "`Success: LoRA adapter '<name>' added (or removed) successfully.`" };
