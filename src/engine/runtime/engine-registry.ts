import type { InferenceEngine } from "../api.js";
import type { ModelCatalog } from "../catalog.js";
import type { KernelsChoice } from "../kernels/settings.js";
import { EngineError } from "./errors.js";
import { LocalEngine } from "./local-engine.js";
import type { SchedulerOptions } from "./options.js";

export interface EngineRegistryOptions {
  /** Scheduler settings of every engine (`priorityScheduling` comes from `priorityModels`). */
  scheduler?: Partial<Omit<SchedulerOptions, "priorityScheduling">>;
  /** Base model ids whose engines admit requests by priority; "all" for every model. */
  priorityModels?: readonly string[] | "all";
  kernels?: KernelsChoice;
}

/**
 * The engines of the served base models: one `LocalEngine` per model id of the catalog, started on
 * first use and shared by every request for that model (adapters are applied per request). A model
 * that fails to start is tried again on the next `get`. `close` stops every engine thread.
 */
export class EngineRegistry {
  private readonly engines = new Map<string, Promise<LocalEngine>>();
  private closed = false;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly options: EngineRegistryOptions = {},
  ) {}

  /** The engine serving `baseModelId`, started (and its weights loaded) if it is not running yet. */
  get(baseModelId: string): Promise<InferenceEngine> {
    return this.engine(baseModelId);
  }

  /** Ids of the models whose engines are started or starting. */
  started(): string[] {
    return [...this.engines.keys()];
  }

  /** Whether `baseModelId` is served with priority scheduling. */
  usesPriority(baseModelId: string): boolean {
    const { priorityModels = [] } = this.options;
    return priorityModels === "all" || priorityModels.includes(baseModelId);
  }

  async close(): Promise<void> {
    this.closed = true;
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.all(engines.map(async (starting) => (await starting.catch(() => null))?.close()));
  }

  private engine(baseModelId: string): Promise<LocalEngine> {
    if (this.closed) return Promise.reject(new EngineError("closed", "The inference engines are shut down"));
    const running = this.engines.get(baseModelId);
    if (running) return running;
    const entry = this.catalog.get(baseModelId);
    if (!entry) return Promise.reject(new EngineError("invalid_request", `The model '${baseModelId}' is not served here`));
    const starting = LocalEngine.start({
      id: entry.id,
      dir: entry.dir,
      scheduler: { ...this.options.scheduler, priorityScheduling: this.usesPriority(entry.id) },
      ...(this.options.kernels ? { kernels: this.options.kernels } : {}),
    });
    this.engines.set(baseModelId, starting);
    starting.catch(() => {
      if (this.engines.get(baseModelId) === starting) this.engines.delete(baseModelId);
    });
    return starting;
  }
}
