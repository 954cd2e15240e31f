import type { UpstreamConfig } from "../../../config-upstreams.js";
import { parseModelName } from "../../model-names.js";
import { resolveModel } from "../models/model-resolver.js";
import type { PrepareContext } from "../pipeline/prepare.js";
import type { UpstreamTarget } from "./forward.js";
import { UpstreamAdapters } from "./upstream-adapters.js";
import { UpstreamClient } from "./upstream-client.js";

/**
 * Decides which chat requests an upstream serves (FLYWHEEL_UPSTREAMS): a base model id that has
 * one, and every trained model of such a base model — its latest or named checkpoint as a LoRA
 * adapter loaded upstream, or the upstream's base model before the first checkpoint. Everything
 * else runs on the built-in engine.
 */
export class UpstreamRouter {
  readonly adapters = new UpstreamAdapters();
  private readonly clients: Map<string, UpstreamClient>;

  constructor(configs: UpstreamConfig[]) {
    this.clients = new Map(configs.map((config) => [config.modelId, new UpstreamClient(config)]));
  }

  /** Base model ids with an upstream. */
  ids(): string[] {
    return [...this.clients.keys()];
  }

  async target(model: string | null | undefined, ctx: PrepareContext): Promise<UpstreamTarget | undefined> {
    if (this.clients.size === 0 || !model || ctx.runtimeAdapters?.get(ctx.entity, model)) return undefined;
    const parsed = parseModelName(model, (id) => this.clients.has(id) || ctx.resolver.catalog.get(id) !== undefined);
    if (!parsed) return undefined;
    if (parsed.kind === "base") {
      const client = this.clients.get(parsed.id);
      return client ? { client, model: client.config.upstreamModel, responseModel: parsed.id, trained: false } : undefined;
    }
    const resolved = await resolveModel({ requested: model, parsed }, ctx.entity, ctx.resolver);
    const client = this.clients.get(resolved.baseModelId);
    if (!client) return undefined;
    const target: UpstreamTarget = { client, model: client.config.upstreamModel, responseModel: resolved.responseModel, trained: true };
    if (resolved.adapter) {
      target.adapter = resolved.adapter;
      target.model = await this.adapters.ensure(client, resolved.adapter);
    }
    return target;
  }
}
