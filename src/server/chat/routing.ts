import type { Config } from "../../config.js";
import { RuntimeAdapters } from "./lora/runtime-adapters.js";
import { UpstreamRouter } from "./upstream/upstream-router.js";

/** What decides where a chat request runs, beyond the served base models and the trained-model registry. */
export interface ChatRouting {
  /** Adapters loaded through /v1/load_lora_adapter. */
  runtimeAdapters: RuntimeAdapters;
  /** Base models whose inference an upstream server does (FLYWHEEL_UPSTREAMS). */
  upstreams: UpstreamRouter;
}

export function createChatRouting(config: Config): ChatRouting {
  return { runtimeAdapters: new RuntimeAdapters(), upstreams: new UpstreamRouter(config.upstreams) };
}
