import { z } from "zod";

/** The inference catalogue (`docs/api/trace.md#inference-catalogue`): paths and answers. */

export const ProviderPath = z.object({ provider: z.string() });
export const VendorPath = z.object({ vendor: z.string() });

/** A served model in the router catalogue's shape (OpenRouter's `/models`). */
export const RouterModelsRes = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      created: z.number(),
      description: z.string(),
      input_modalities: z.array(z.string()),
      output_modalities: z.array(z.string()),
      quantization: z.string().nullable(),
      context_length: z.int().nullable(),
      max_output_length: z.int().nullable(),
      pricing: z.object({ prompt: z.string(), completion: z.string(), request: z.string() }),
      supported_sampling_parameters: z.array(z.string()),
      supported_features: z.array(z.string()),
    }),
  ),
});

export const AnalysisModelsRes = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      slug: z.string(),
      model_type: z.string().nullable(),
      architecture: z.string().nullable(),
      context_length: z.int().nullable(),
      dtype: z.string().nullable(),
    }),
  ),
});

export const HardwareRes = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      platform: z.string(),
      arch: z.string(),
      cpu: z.object({ model: z.string().nullable(), count: z.int().min(0) }),
      memory_bytes: z.number(),
      accelerators: z.array(z.unknown()).describe("None: this server runs on CPUs"),
    }),
  ),
});
