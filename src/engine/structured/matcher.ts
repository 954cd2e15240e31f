import type { CompiledGrammar, GrammarMatcher, TokenizerInfo } from "@mlc-ai/web-xgrammar";
import { TokenBitmask } from "./bitmask.js";
import { advanceUtf8, UTF8_BOUNDARY, type Utf8Masks, type Utf8State } from "./utf8.js";
import type { XgrammarRuntime } from "./xgrammar.js";

interface Handles {
  matcher: GrammarMatcher;
  compiled: CompiledGrammar;
  freed: boolean;
}

function free(handles: Handles): void {
  if (handles.freed) return;
  handles.freed = true;
  handles.matcher.dispose();
  handles.compiled.dispose();
}

// WASM objects are not garbage-collected; this frees the ones of a matcher nobody disposed.
const forgotten = new FinalizationRegistry<Handles>(free);

/**
 * One sequence's position in a grammar. Each decode step: `nextTokenMask()` → apply it to the logits
 * → sample → `accept(token)`. Stop tokens are allowed only where the output is complete; accepting
 * one ends the match (`isTerminated`). Call `dispose()` when the sequence ends.
 */
export class ConstraintMatcher {
  private readonly history: number[] = [];
  /** Where the output stands in UTF-8 after each accepted token. */
  private readonly utf8States: Utf8State[] = [];
  private terminated = false;

  private constructor(
    private readonly runtime: XgrammarRuntime,
    private readonly handles: Handles,
    private readonly utf8: Utf8Masks,
    /** The width of the model's logits; masks cover exactly this many ids. */
    readonly vocabSize: number,
  ) {
    forgotten.register(this, handles, handles);
  }

  /** Starts at the beginning of a compiled grammar, taking over `own` (a handle nobody else frees). */
  static async start(runtime: XgrammarRuntime, own: CompiledGrammar, utf8: Utf8Masks, vocabSize: number): Promise<ConstraintMatcher> {
    const api = runtime.api;
    // createGrammarMatcher asks compiled.tokenizerInfo() for the vocabulary size, which makes a
    // TokenizerInfo object it never frees; answer from what we already know instead.
    own.tokenizerInfo = () => ({ getVocabSize: () => vocabSize }) as unknown as TokenizerInfo;
    try {
      const matcher = await api.GrammarMatcher.createGrammarMatcher(own);
      return new ConstraintMatcher(runtime, { matcher, compiled: own, freed: false }, utf8, vocabSize);
    } catch (error) {
      own.dispose();
      throw runtime.asCallError(error);
    }
  }

  /** The tokens accepted so far, stop token included. */
  get acceptedTokens(): readonly number[] {
    return this.history;
  }

  /** True once a stop token was accepted: the output is complete and nothing more may follow. */
  get isTerminated(): boolean {
    return this.terminated;
  }

  /** The tokens the grammar allows next. */
  async nextTokenMask(): Promise<TokenBitmask> {
    this.assertUsable();
    // xgrammar aborts when asked for a mask after the stop token; that is a caller bug, said plainly.
    if (this.terminated) throw new Error("the grammar already accepted a stop token: the sequence is finished");
    let mask: TokenBitmask;
    try {
      mask = new TokenBitmask(await this.handles.matcher.getNextTokenBitmask(), this.vocabSize);
    } catch (error) {
      throw this.runtime.asCallError(error);
    }
    mask.intersect(this.utf8.allowed(this.utf8States[this.utf8States.length - 1] ?? UTF8_BOUNDARY));
    return mask;
  }

  /** Advances past `tokenId`; false (and no change) if the mask would not allow it here. */
  accept(tokenId: number): boolean {
    this.assertUsable();
    if (this.terminated || !Number.isInteger(tokenId) || tokenId < 0 || tokenId >= this.vocabSize) return false;
    const before = this.utf8States[this.utf8States.length - 1] ?? UTF8_BOUNDARY;
    if ((this.utf8.allowed(before)[tokenId >>> 5]! & (1 << (tokenId & 31))) === 0) return false;
    if (!this.handles.matcher.acceptToken(tokenId)) return false;
    const bytes = this.utf8.bytesOf(tokenId);
    this.history.push(tokenId);
    this.utf8States.push(bytes ? advanceUtf8(before, bytes) : before);
    this.terminated = this.handles.matcher.isTerminated();
    return true;
  }

  /** Undoes the last `count` accepted tokens (speculative decoding, beam search). */
  rollback(count: number): void {
    this.assertUsable();
    if (!Number.isInteger(count) || count < 0 || count > this.history.length) {
      throw new RangeError(`cannot roll back ${count} tokens after ${this.history.length}`);
    }
    if (count === 0) return;
    this.handles.matcher.rollBack(count);
    this.history.length -= count;
    this.utf8States.length -= count;
    this.terminated = this.handles.matcher.isTerminated();
  }

  /**
   * An independent matcher at the same position (n > 1 from a shared prefix, beam search). xgrammar
   * cannot copy a matcher's state, so the copy replays this one's tokens: O(tokens so far).
   */
  async fork(): Promise<ConstraintMatcher> {
    this.assertUsable();
    const copy = await ConstraintMatcher.start(this.runtime, ownHandle(this.runtime, this.handles.compiled), this.utf8, this.vocabSize);
    for (const token of this.history) {
      if (!copy.accept(token)) {
        copy.dispose();
        throw new Error(`replaying token ${token} failed while forking a grammar matcher`);
      }
    }
    return copy;
  }

  /** Frees the WASM objects. The matcher cannot be used afterwards; calling it twice is harmless. */
  dispose(): void {
    forgotten.unregister(this.handles);
    free(this.handles);
  }

  private assertUsable(): void {
    if (this.handles.freed) throw new Error("the grammar matcher was disposed");
  }
}

/** A second handle on the same compiled grammar; the grammar lives until every handle is freed. */
export function ownHandle(runtime: XgrammarRuntime, compiled: CompiledGrammar): CompiledGrammar {
  return new runtime.api.CompiledGrammar(compiled.handle.clone());
}
