import type { GenerateEvent, PromptPositionLogprobs } from "../api.js";
import type { KvCache } from "../model/kv-cache.js";
import type { LoadedModel } from "../model/load.js";
import type { LinearAdapter, LogitsSelection } from "../model/types.js";
import type { SamplingParams } from "../sampling/params.js";
import { promptPositionLogprobs } from "../sampling/prompt-logprobs.js";
import type { Sampler } from "../sampling/sampler.js";
import type { StructuredConstraint } from "../structured/types.js";
import { ConstraintState } from "./constraint-state.js";
import type { PrefixCache } from "./prefix-cache.js";
import type { ConstraintBackend } from "./seams.js";
import { Sequence } from "./sequence.js";
import type { QueueKey } from "./wait-queue.js";

/** What every request of an engine shares. */
export interface RequestContext {
  model: LoadedModel;
  sampler: Sampler;
  prefixCache: PrefixCache;
  constraints: ConstraintBackend;
}

/** A validated request, as the engine runs it. */
export interface RequestSpec {
  id: string;
  /** The prompt as run (after truncation). */
  prompt: number[];
  params: SamplingParams;
  /** The output budget after the context limit: min(max_tokens, max_model_len − prompt). */
  maxTokens: number;
  adapter: LinearAdapter | undefined;
  /** Adapter identity + cache_salt: whose KV this request may reuse (`prefixNamespace`). */
  namespace: string;
  priority: number;
  arrival: number;
  constraint: StructuredConstraint | undefined;
  constraintStartsAfterTokenId: number | undefined;
}

/**
 * One generation request inside the engine thread: its prompt sequence until the prompt has run,
 * then its choices or beams (subclasses). The scheduler asks for the sequences that hold KV and
 * runs their pending tokens; whenever a sequence is fully computed it hands the logits of its next
 * token to `onLogits`. Events go out through `emit` in the order the API promises: `started`
 * (after the prompt ran, with prompt logprobs), then outputs, then one `finished` per choice.
 */
export abstract class EngineRequest implements QueueKey {
  readonly id: string;
  readonly priority: number;
  readonly arrival: number;
  /** Sequences this request runs at once once its prompt has forked (n, or the beam width). */
  readonly width: number;
  /**
   * Prompt logprobs need every prompt position computed here, so they never read cached KV
   * (docs/api/chat.md#prompt-logprobs).
   */
  readonly readsPrefixCache: boolean;
  cachedTokens = 0;
  /** Until the prompt has run: the prompt sequence. */
  protected promptSequence: Sequence | null;
  private startedSent = false;
  private admittedBefore = false;
  private readonly promptLogprobs: (PromptPositionLogprobs | null)[] | null;
  /** Prompt positions whose prompt logprobs are collected (they survive a preemption). */
  private promptRowsDone = 0;

  constructor(
    readonly spec: RequestSpec,
    protected readonly context: RequestContext,
    protected readonly emit: (event: GenerateEvent) => void,
  ) {
    this.id = spec.id;
    this.priority = spec.priority;
    this.arrival = spec.arrival;
    this.width = spec.params.n;
    this.promptSequence = new Sequence([...spec.prompt]);
    this.promptLogprobs = spec.params.promptLogprobs === null ? null : spec.prompt.length > 0 ? [null] : [];
    this.readsPrefixCache = this.promptLogprobs === null;
  }

  /** The sequences that hold (or, when admitted, will hold) KV. */
  abstract sequences(): readonly Sequence[];

  /** All choices finished. */
  abstract get done(): boolean;

  /** `sequence` is fully computed: `row` holds the logits of its next token. */
  abstract onLogits(sequence: Sequence, row: Float32Array): Promise<void>;

  /** Ends every unfinished choice with finish reason `abort` (cancellation, shutdown). */
  abstract abort(): void;

  /** Frees caches and grammar matchers; called once when the request leaves the engine. */
  abstract release(): void;

  /** KV positions the request needs to start (each of its `width` sequences will hold the prompt). */
  admissionPositions(): number {
    if (this.promptSequence) return this.width * this.promptSequence.tokens.length;
    return this.sequences().reduce((sum, sequence) => sum + sequence.tokens.length, 0);
  }

  /**
   * Gives every sequence without KV a cache: the longest cached prefix when allowed (always leaving
   * at least one token to run, for its logits), else an empty one.
   */
  allocate(createCache: (capacity: number) => KvCache): void {
    for (const sequence of this.sequences()) {
      if (sequence.cache) continue;
      const hit = this.readsPrefixCache ? this.context.prefixCache.lookup(this.spec.namespace, sequence.tokens, sequence.tokens.length - 1) : null;
      sequence.cache = hit?.cache ?? createCache(sequence.tokens.length);
      if (sequence === this.promptSequence && !this.admittedBefore) this.cachedTokens = hit?.length ?? 0;
    }
    this.admittedBefore = true;
  }

  /** Drops every cache (preemption), keeping the computed KV in the prefix cache for the resume. */
  preempt(): void {
    for (const sequence of this.sequences()) this.retire(sequence);
  }

  /** Which logits the forward pass of `count` tokens from `start` must return for `sequence`. */
  logitsFor(sequence: Sequence, start: number, count: number): LogitsSelection {
    const end = start + count;
    if (sequence === this.promptSequence && this.promptLogprobs && end - 1 >= this.promptRowsDone && start <= sequence.tokens.length - 2) return "all";
    return end === sequence.tokens.length ? "last" : "none";
  }

  /** Takes the prompt logprobs out of the rows of a chunk run with `logits: "all"`. */
  absorbPromptRows(sequence: Sequence, start: number, count: number, rows: Float32Array): void {
    if (sequence !== this.promptSequence || !this.promptLogprobs) return;
    const vocab = rows.length / count;
    const prompt = sequence.tokens;
    const topN = this.spec.params.promptLogprobs ?? 0;
    // The row at position p scores prompt token p + 1.
    for (let p = Math.max(start, this.promptRowsDone); p < start + count && p <= prompt.length - 2; p++) {
      this.promptLogprobs.push(promptPositionLogprobs(rows.subarray((p - start) * vocab, (p - start + 1) * vocab), prompt[p + 1]!, topN));
      this.promptRowsDone = p + 1;
    }
  }

  /** The first event, once the prompt has run (or when the request ends before that). */
  protected sendStarted(): void {
    if (this.startedSent) return;
    this.startedSent = true;
    const complete = this.promptLogprobs && this.promptLogprobs.length === this.spec.prompt.length;
    this.emit({ type: "started", promptTokenIds: [...this.spec.prompt], cachedTokens: this.cachedTokens, promptLogprobs: complete ? this.promptLogprobs : null });
  }

  /** Ends a request that never got past its prompt: `started`, then `abort` for every choice. */
  protected abortBeforeOutput(): void {
    this.sendStarted();
    for (let index = 0; index < this.width; index++) this.emit({ type: "finished", index, finishReason: "abort", stopReason: null });
  }

  /** The prompt has run: keep a copy of its KV for later requests with the same prefix. */
  protected rememberPrompt(sequence: Sequence): void {
    if (this.context.prefixCache.maxBytes === 0 || !sequence.cache) return;
    this.context.prefixCache.insert(this.spec.namespace, sequence.tokens, sequence.cache.fork());
  }

  /** Ends a sequence: its KV goes to the prefix cache (it is never written again). */
  protected retire(sequence: Sequence): void {
    const cache = sequence.release();
    if (!cache || cache.length === 0 || this.context.prefixCache.maxBytes === 0) return;
    this.context.prefixCache.insert(this.spec.namespace, sequence.tokens.slice(0, cache.length), cache);
  }

  /** A grammar matcher for a new sequence, when the request is constrained. */
  protected async startConstraint(): Promise<ConstraintState | null> {
    if (!this.spec.constraint) return null;
    return ConstraintState.start(await this.context.constraints.createMatcher(this.spec.constraint), this.spec.constraintStartsAfterTokenId);
  }
}
