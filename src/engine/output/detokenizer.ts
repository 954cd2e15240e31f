import type { Tokenizer } from "../tokenizer/types.js";
import { findStopString, stopHoldBack } from "./stop-strings.js";

export interface DetokenizerOptions {
  skipSpecialTokens: boolean;
  /** With special tokens kept: separate each from neighbouring text by one space. */
  spacesBetweenSpecialTokens: boolean;
  stop: readonly string[];
  includeStopStrInOutput: boolean;
  /** Stop strings are searched only after this many tokens, and never in their text. */
  minTokens: number;
}

/**
 * Turns the growing token list of one sequence into its visible text, incrementally
 * (`docs/api/chat.md#stopping`): bytes of a character split across tokens are held back until it completes,
 * special tokens are dropped or kept, stop strings cut the text, and while streaming the last
 * max(len(stop)) − 1 characters wait so a partial stop string is never sent.
 *
 * Text is built from each token's true bytes, so multi-token characters come out whole. A
 * character still incomplete when the sequence ends is dropped, as vLLM's detokenizer does.
 */
export class IncrementalDetokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly options: DetokenizerOptions;
  private readonly holdBack: number;
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private text = "";
  private tokenCount = 0;
  private sentLength = 0;
  private lastSegment: "none" | "text" | "special" = "none";

  constructor(tokenizer: Tokenizer, options: DetokenizerOptions) {
    this.tokenizer = tokenizer;
    this.options = options;
    this.holdBack = stopHoldBack(options.stop, options.includeStopStrInOutput);
  }

  /** All output text so far (after any stop-string cut), including what is still held back. */
  get outputText(): string {
    return this.text;
  }

  /**
   * Adds newly generated tokens. `stopTerminated` means the last of them ended the sequence as a
   * stop token (EOS or a stop token id): its text is left out unless include_stop_str_in_output.
   * Returns the stop string that matched, if any; the text is then already cut.
   */
  update(tokenIds: readonly number[], stopTerminated: boolean): string | null {
    if (tokenIds.length === 0) return null;
    const count = stopTerminated && !this.options.includeStopStrInOutput ? tokenIds.length - 1 : tokenIds.length;
    let searchFrom = this.text.length;
    for (let i = 0; i < count; i++) {
      this.text += this.decodeNext(tokenIds[i]!);
      this.tokenCount++;
      if (this.options.minTokens > 0 && this.tokenCount <= this.options.minTokens) searchFrom = this.text.length;
    }
    this.tokenCount += tokenIds.length - count;
    if (this.options.stop.length === 0 || this.tokenCount <= this.options.minTokens) return null;
    const match = findStopString(this.text, this.text.length - searchFrom, this.options.stop, this.options.includeStopStrInOutput);
    if (!match) return null;
    this.text = this.text.slice(0, match.cutAt);
    return match.stop;
  }

  /**
   * The visible text not returned before. Until the sequence is `finished`, the stop-string
   * hold-back stays unsent (never splitting a surrogate pair); once finished, everything goes.
   */
  takeText(finished: boolean): string {
    let end = finished ? this.text.length : this.text.length - this.holdBack;
    if (end > 0 && end < this.text.length && isHighSurrogate(this.text.charCodeAt(end - 1))) end--;
    if (end <= this.sentLength) return "";
    const delta = this.text.slice(this.sentLength, end);
    this.sentLength = end;
    return delta;
  }

  private decodeNext(tokenId: number): string {
    const bytes = this.tokenizer.tokenBytes(tokenId);
    if (!this.tokenizer.isSpecial(tokenId)) return this.textPiece(this.decoder.decode(bytes, { stream: true }));
    if (this.options.skipSpecialTokens) return "";
    // A special token ends any partial character before it (U+FFFD, as a full decode gives).
    const pending = this.textPiece(this.decoder.decode());
    const separator = this.lastSegment !== "none" && this.options.spacesBetweenSpecialTokens ? " " : "";
    this.lastSegment = "special";
    return pending + separator + new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  }

  /** Decoded text of ordinary tokens, separated from a kept special token before it when asked. */
  private textPiece(piece: string): string {
    if (piece.length === 0) return "";
    const separator = this.lastSegment === "special" && this.options.spacesBetweenSpecialTokens ? " " : "";
    this.lastSegment = "text";
    return separator + piece;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The text of a whole token list at once (e.g. a finished beam), with the same rules as streaming. */
export function detokenize(tokenizer: Tokenizer, tokenIds: readonly number[], options: { skipSpecialTokens: boolean; spacesBetweenSpecialTokens: boolean }): string {
  const detokenizer = new IncrementalDetokenizer(tokenizer, { ...options, stop: [], includeStopStrInOutput: true, minTokens: 0 });
  detokenizer.update(tokenIds, false);
  return detokenizer.takeText(true);
}
