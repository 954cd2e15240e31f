import type { CompiledGrammar, GrammarCompiler, TokenizerInfo } from "@mlc-ai/web-xgrammar";
import type { Tokenizer } from "../tokenizer/types.js";
import { checkPrepared } from "./check.js";
import { StructuredOutputError, XgrammarCallError } from "./errors.js";
import { compileSource, prepareConstraint } from "./grammar-source.js";
import { ConstraintMatcher, ownHandle } from "./matcher.js";
import type { StructuredConstraint } from "./types.js";
import { Utf8Masks } from "./utf8.js";
import { buildVocabulary } from "./vocabulary.js";
import { XgrammarRuntime } from "./xgrammar.js";

export interface StructuredOutputsOptions {
  tokenizer: Tokenizer;
  /** The width of the model's logits (≥ the tokenizer's vocabulary); ids the tokenizer lacks are always masked. */
  vocabSize?: number;
  /** Ids that end a sequence; the grammar allows them only where the output is complete. Default: the tokenizer's EOS. */
  stopTokenIds?: readonly number[];
  /** How many compiled grammars to keep, least recently used dropped first. Default 64. */
  cacheSize?: number;
}

// One instance per thread serves every tokenizer; loaded on first use, never on import.
let engineRuntime: Promise<XgrammarRuntime> | undefined;

function sharedRuntime(): Promise<XgrammarRuntime> {
  engineRuntime ??= XgrammarRuntime.load().catch((error: unknown) => {
    engineRuntime = undefined; // let a later call try again
    throw error;
  });
  return engineRuntime;
}

/**
 * Structured outputs for one model: xgrammar's view of its tokenizer, and the constraints compiled
 * against it (cached). The engine creates one per loaded model and a `ConstraintMatcher` per
 * constrained sequence.
 */
export class StructuredOutputs {
  private readonly cache = new Map<string, Promise<CompiledGrammar>>();
  private disposed = false;

  private constructor(
    private readonly runtime: XgrammarRuntime,
    private readonly tokenizerInfo: TokenizerInfo,
    private readonly compiler: GrammarCompiler,
    private readonly utf8: Utf8Masks,
    readonly vocabSize: number,
    readonly stopTokenIds: readonly number[],
    private readonly cacheSize: number,
  ) {}

  /** Builds xgrammar's tokenizer tables (a few hundred ms for a 150k vocabulary). */
  static async create(options: StructuredOutputsOptions): Promise<StructuredOutputs> {
    const { tokenizer } = options;
    const vocabSize = options.vocabSize ?? tokenizer.vocabSize;
    const stopTokenIds = [...new Set(options.stopTokenIds ?? (tokenizer.eosTokenId === undefined ? [] : [tokenizer.eosTokenId]))];
    if (vocabSize < tokenizer.vocabSize) throw new RangeError(`vocabSize ${vocabSize} is smaller than the tokenizer's ${tokenizer.vocabSize} tokens`);
    const badStop = stopTokenIds.find((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (badStop !== undefined) throw new RangeError(`stop token id ${badStop} is outside the vocabulary of ${vocabSize}`);
    if (stopTokenIds.length === 0) throw new RangeError("structured outputs need at least one stop token id (the tokenizer has no EOS)");

    const runtime = await sharedRuntime();
    const { encoded, producible } = buildVocabulary(tokenizer, stopTokenIds);
    const utf8 = new Utf8Masks(producible, new Set(stopTokenIds), vocabSize);
    return runtime.call(async (api) => {
      const info = await api.TokenizerInfo.createTokenizerInfo(encoded, "byte_level", false, vocabSize, [...stopTokenIds]);
      // xgrammar's own cache never forgets; ours below is bounded.
      const compiler = await api.GrammarCompiler.createGrammarCompiler(info, false);
      return new StructuredOutputs(runtime, info, compiler, utf8, vocabSize, stopTokenIds, options.cacheSize ?? 64);
    });
  }

  /**
   * Checks that the constraint compiles for this tokenizer, and compiles it, so that generation can
   * start at once. Throws `StructuredOutputError` with vLLM's message for a bad constraint.
   */
  async check(constraint: StructuredConstraint): Promise<void> {
    // A grammar that compiles can still accept no string at all (left recursion such as
    // `root ::= root root`): then not even the first token has a choice, and sampling would fail.
    const matcher = await this.createMatcher(constraint);
    try {
      if ((await matcher.nextTokenMask()).isEmpty) {
        throw new StructuredOutputError(prepareConstraint(constraint).describeFailure("no string can match it (a rule that never finishes, such as left recursion)"));
      }
    } finally {
      matcher.dispose();
    }
  }

  /** A matcher at the start of the constraint, for one sequence. */
  async createMatcher(constraint: StructuredConstraint): Promise<ConstraintMatcher> {
    return ConstraintMatcher.start(this.runtime, await this.compile(constraint), this.utf8, this.vocabSize);
  }

  /** Frees xgrammar's tables; matchers already made keep working. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const entry of this.cache.values())
      void entry.then(
        (compiled) => compiled.dispose(),
        () => undefined,
      );
    this.cache.clear();
    this.compiler.dispose();
    this.tokenizerInfo.dispose();
  }

  /**
   * The compiled grammar, as a handle of the caller's own. The handle is taken in the same turn as
   * the cache's promise settles, before an eviction (which frees the cache's handle) can run.
   */
  private async compile(constraint: StructuredConstraint): Promise<CompiledGrammar> {
    if (this.disposed) throw new Error("structured outputs were disposed");
    const prepared = prepareConstraint(constraint);
    let compiling = this.cache.get(prepared.key);
    if (compiling) {
      this.cache.delete(prepared.key); // re-inserted below as the most recently used
    } else {
      // Parsed in the checking instance first, so this instance only compiles input known to be good.
      const started = checkPrepared(prepared).then(() => this.runtime.call((api) => compileSource(api, this.compiler, prepared.source)));
      started.catch(() => this.cache.get(prepared.key) === started && this.cache.delete(prepared.key));
      compiling = started;
    }
    this.cache.set(prepared.key, compiling);
    this.evictBeyondCapacity();
    try {
      return ownHandle(this.runtime, await compiling);
    } catch (error) {
      if (error instanceof XgrammarCallError) throw new StructuredOutputError(prepared.describeFailure(error.reason));
      throw error;
    }
  }

  private evictBeyondCapacity(): void {
    while (this.cache.size > this.cacheSize) {
      const [oldestKey, oldest] = this.cache.entries().next().value!;
      this.cache.delete(oldestKey);
      // Matchers hold their own reference, so freeing the cache's copy is safe.
      void oldest.then(
        (compiled) => compiled.dispose(),
        () => undefined,
      );
    }
  }
}
