import type { GenerateEvent } from "../api.js";
import type { LoadedModel } from "../model/load.js";
import { Sampler } from "../sampling/sampler.js";
import type { StructuredConstraint } from "../structured/types.js";
import { AdapterCache } from "./adapter-cache.js";
import { BeamRequest } from "./beam-request.js";
import { EngineError, toWireError, type WireError } from "./errors.js";
import { checkRequest, type WireGenerateRequest } from "./intake.js";
import type { SchedulerOptions } from "./options.js";
import { PrefixCache, prefixNamespace } from "./prefix-cache.js";
import type { EngineRequest, RequestContext } from "./request.js";
import { SamplingRequest } from "./sampling-request.js";
import { Scheduler, type StepItem } from "./scheduler.js";
import { type AdapterLoader, type ConstraintBackend, noAdapterLoader } from "./seams.js";

/** What happened to one request since the last `takeUpdates`: its new events, and whether it ended. */
export interface RequestUpdate {
  requestId: string;
  events: GenerateEvent[];
  /** Set when the request left the engine: `true` after its last event, or the error that ended it. */
  end?: true | WireError;
}

export interface EngineStats {
  waitingRequests: number;
  runningRequests: number;
  runningSequences: number;
  /** KV bytes held by running sequences. */
  kvCacheBytes: number;
  prefixCacheBytes: number;
  prefixCacheEntries: number;
  loadedAdapters: number;
  steps: number;
  preemptions: number;
}

export interface EngineCoreOptions {
  model: LoadedModel;
  scheduler: SchedulerOptions;
  constraints: ConstraintBackend;
  adapterLoader?: AdapterLoader;
  sampler?: Sampler;
}

/**
 * The engine of one model, run step by step by whoever owns the thread (the worker loop, or a test).
 * `submit` and `cancel` only queue; `step` takes them in, asks the scheduler for the batch, runs
 * one `Transformer.forward` for every scheduled sequence, and hands each finished row of logits to
 * its request (prompt logprobs, sampling, beam search). Events are collected per request until
 * `takeUpdates`.
 */
export class EngineCore {
  private readonly model: LoadedModel;
  private readonly scheduler: Scheduler;
  private readonly context: RequestContext;
  private readonly adapters: AdapterCache;
  private readonly incoming: WireGenerateRequest[] = [];
  private readonly cancels = new Set<string>();
  private readonly requests = new Map<string, EngineRequest>();
  private readonly updates = new Map<string, RequestUpdate>();
  private arrivals = 0;
  private steps = 0;

  constructor(options: EngineCoreOptions) {
    const { model } = options;
    this.model = model;
    const { config, transformer } = model;
    const bytesPerPosition = 2 * config.numLayers * config.numKvHeads * config.headDim * 4;
    this.scheduler = new Scheduler(options.scheduler, bytesPerPosition, (capacity) => transformer.createCache(capacity));
    this.context = { model, sampler: options.sampler ?? new Sampler(), prefixCache: new PrefixCache(options.scheduler.prefixCacheBytes), constraints: options.constraints };
    this.adapters = new AdapterCache(model, options.adapterLoader ?? noAdapterLoader, options.scheduler.maxLoadedAdapters);
  }

  /** Queues a request; problems with it are reported as its end, at the next step. */
  submit(request: WireGenerateRequest): void {
    this.incoming.push(request);
  }

  /** Cancels a request at the next step boundary: its choices finish with `abort`. */
  cancel(requestId: string): void {
    this.cancels.add(requestId);
  }

  /** Nothing to do until something is submitted or cancelled. */
  get idle(): boolean {
    return this.incoming.length === 0 && this.cancels.size === 0 && this.requests.size === 0;
  }

  async checkConstraint(constraint: StructuredConstraint): Promise<void> {
    await this.context.constraints.check(constraint);
  }

  /** One scheduling step: intake, one batched forward pass, sampling. */
  async step(): Promise<void> {
    this.intake();
    const items = this.scheduler.plan();
    if (items.length === 0) return;
    this.steps++;
    let logits: (Float32Array | null)[];
    try {
      logits = this.model.transformer.forward(
        items.map(({ request, sequence, start, count, logits: selection }) => ({
          cache: sequence.cache!,
          tokens: sequence.tokens.slice(start, start + count),
          position: start,
          logits: selection,
          adapter: request.spec.adapter,
        })),
      );
    } catch (error) {
      for (const request of new Set(items.map((entry) => entry.request))) this.fail(request, error);
      return;
    }
    await this.dispatch(items, logits);
  }

  /** Events and ends since the last call, one entry per request. */
  takeUpdates(): RequestUpdate[] {
    const updates = [...this.updates.values()];
    this.updates.clear();
    return updates;
  }

  /** Ends every request with `abort` (the engine is closing). */
  abortAll(): void {
    this.intake();
    for (const request of [...this.requests.values()]) this.cancelRequest(request);
  }

  stats(): EngineStats {
    const { scheduler, context } = this;
    return {
      waitingRequests: scheduler.waiting.length + this.incoming.length,
      runningRequests: scheduler.running.length,
      runningSequences: scheduler.runningSequences,
      kvCacheBytes: scheduler.kvBytes,
      prefixCacheBytes: context.prefixCache.bytes,
      prefixCacheEntries: context.prefixCache.size,
      loadedAdapters: this.adapters.size,
      steps: this.steps,
      preemptions: scheduler.preemptions,
    };
  }

  private intake(): void {
    for (const wire of this.incoming.splice(0)) {
      try {
        this.accept(wire);
      } catch (error) {
        this.update(wire.requestId).end = toWireError(error);
      }
    }
    for (const requestId of this.cancels) {
      const request = this.requests.get(requestId);
      if (request) this.cancelRequest(request);
    }
    this.cancels.clear();
  }

  private accept(wire: WireGenerateRequest): void {
    if (this.requests.has(wire.requestId)) throw new EngineError("invalid_request", `a request with id '${wire.requestId}' is already running`);
    const { prompt, maxTokens } = checkRequest(wire, this.model.config);
    const spec = {
      id: wire.requestId,
      prompt,
      params: wire.params,
      maxTokens,
      adapter: wire.adapter ? this.adapters.get(wire.adapter) : undefined,
      namespace: prefixNamespace(wire.adapter?.id, wire.cacheSalt),
      priority: wire.priority ?? 0,
      arrival: this.arrivals++,
      constraint: wire.constraint,
      constraintStartsAfterTokenId: wire.constraintStartsAfterTokenId,
    };
    const emit = (event: GenerateEvent) => this.update(spec.id).events.push(event);
    const request = wire.params.useBeamSearch ? new BeamRequest(spec, this.context, emit) : new SamplingRequest(spec, this.context, emit);
    this.requests.set(spec.id, request);
    this.scheduler.waiting.insert(request);
  }

  private async dispatch(items: StepItem[], logits: (Float32Array | null)[]): Promise<void> {
    const vocab = this.model.config.vocabSize;
    const ready: [StepItem, Float32Array][] = [];
    items.forEach((entry, i) => {
      const rows = logits[i]!;
      if (entry.logits === "all") entry.request.absorbPromptRows(entry.sequence, entry.start, entry.count, rows);
      if (entry.sequence.pending === 0) ready.push([entry, entry.logits === "all" ? rows.subarray((entry.count - 1) * vocab) : rows]);
    });
    const failed = new Set<EngineRequest>();
    for (const [entry, row] of ready) {
      if (failed.has(entry.request)) continue;
      try {
        requireFiniteLogits(row);
        await entry.request.onLogits(entry.sequence, row);
      } catch (error) {
        failed.add(entry.request);
        this.fail(entry.request, error);
      }
    }
    for (const request of new Set(items.map((entry) => entry.request))) {
      if (!failed.has(request) && request.done) this.finish(request, true);
    }
  }

  private cancelRequest(request: EngineRequest): void {
    request.abort();
    this.finish(request, true);
  }

  private fail(request: EngineRequest, error: unknown): void {
    this.finish(request, toWireError(error));
  }

  private finish(request: EngineRequest, end: true | WireError): void {
    this.scheduler.remove(request);
    request.release();
    this.requests.delete(request.id);
    this.update(request.id).end = end;
  }

  private update(requestId: string): RequestUpdate {
    let update = this.updates.get(requestId);
    if (!update) {
      update = { requestId, events: [] };
      this.updates.set(requestId, update);
    }
    return update;
  }
}

/**
 * NaN or +∞ logits come only from non-finite weights (a poisoned base model or adapter): sampling
 * them would pick an arbitrary token or none, so the request fails with a clear error instead. −∞
 * is a legitimate "never" and passes.
 */
function requireFiniteLogits(row: Float32Array): void {
  for (let id = 0; id < row.length; id++) {
    const logit = row[id]!;
    if (Number.isNaN(logit) || logit === Number.POSITIVE_INFINITY) {
      throw new EngineError("non_finite_model", "the model's weights are not finite: its logits are NaN or infinite, so no token can be sampled; serve an earlier checkpoint or the base model");
    }
  }
}
