import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import type { CatalogEntry } from "../../../engine/catalog.js";
import { defineRoute } from "../../routes.js";
import { AnalysisModelsRes, HardwareRes, ProviderPath, RouterModelsRes, VendorPath } from "./protocol.js";

/** Sampling parameters the chat completions endpoint honours, as OpenRouter-style catalogues list them. */
const SAMPLING_PARAMETERS = [
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "seed",
  "stop",
  "max_tokens",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "response_format",
  "structured_outputs",
  "tools",
  "tool_choice",
];

interface ModelFacts {
  contextLength: number | null;
  dtype: string | null;
  architecture: string | null;
}

function factsOf(entry: CatalogEntry): ModelFacts {
  try {
    const config = JSON.parse(fs.readFileSync(path.join(entry.dir, "config.json"), "utf8")) as Record<string, unknown>;
    const contextLength = typeof config.max_position_embeddings === "number" ? config.max_position_embeddings : null;
    const dtype = typeof config.torch_dtype === "string" ? config.torch_dtype : typeof config.dtype === "string" ? config.dtype : null;
    const architectures = Array.isArray(config.architectures) ? config.architectures : [];
    return { contextLength, dtype, architecture: typeof architectures[0] === "string" ? architectures[0] : null };
  } catch {
    return { contextLength: null, dtype: null, architecture: null };
  }
}

/**
 * The inference catalogue routes (`docs/api/trace.md#inference-catalogue`). W&B lists its hosted models here; Flywheel
 * lists the base models it serves itself (whatever the provider segment names) and the machine it
 * runs on. They need no key, as W&B's do not.
 */
export async function inferenceCatalogRoutes(app: FastifyInstance): Promise<void> {
  const { catalog } = app.services;
  const common = { tags: ["trace: inference"], errorStyle: "trace" as const };

  defineRoute(app, { method: "GET", url: "/inference/router/:provider/models", summary: "Models served here, in the router catalogue shape", params: ProviderPath, response: RouterModelsRes, ...common }, async () => ({
    data: catalog.list().map((entry) => {
      const facts = factsOf(entry);
      return {
        id: entry.id,
        name: entry.id,
        created: entry.created,
        description: `${entry.modelType ?? "unknown"} model served by this Flywheel server`,
        input_modalities: ["text"],
        output_modalities: ["text"],
        quantization: facts.dtype,
        context_length: facts.contextLength,
        max_output_length: facts.contextLength,
        pricing: { prompt: "0", completion: "0", request: "0" },
        supported_sampling_parameters: SAMPLING_PARAMETERS,
        supported_features: ["tools", "json_mode", "structured_outputs", "logprobs"],
      };
    }),
  }));

  defineRoute(app, { method: "GET", url: "/inference/analysis/:provider/models", summary: "Models served here, with what is known about them", params: ProviderPath, response: AnalysisModelsRes, ...common }, async () => ({
    data: catalog.list().map((entry) => {
      const facts = factsOf(entry);
      return { id: entry.id, name: entry.id, slug: entry.id, model_type: entry.modelType ?? null, architecture: facts.architecture, context_length: facts.contextLength, dtype: facts.dtype };
    }),
  }));

  defineRoute(app, { method: "GET", url: "/inference/:vendor/v2/hardware", summary: "The machine this server runs on", params: VendorPath, response: HardwareRes, ...common }, async () => {
    const cpus = os.cpus();
    return {
      data: [
        {
          id: os.hostname(),
          name: os.hostname(),
          platform: os.platform(),
          arch: os.arch(),
          cpu: { model: cpus[0]?.model.trim() ?? null, count: cpus.length },
          memory_bytes: os.totalmem(),
          accelerators: [],
        },
      ],
    };
  });
}
