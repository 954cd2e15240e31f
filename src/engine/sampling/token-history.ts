import type { PenaltyState } from "./logits-processors.js";

/**
 * The tokens of one sequence, with the bookkeeping the penalties need kept incrementally (one
 * update per generated token), so a decode step never rescans the prompt or the output.
 */
export class TokenHistory implements PenaltyState {
  readonly promptTokenIds: readonly number[];
  readonly outputTokenIds: number[] = [];
  readonly seenTokens: number[] = [];
  readonly outputTokens: number[] = [];
  readonly outputCounts = new Map<number, number>();
  private readonly seen = new Set<number>();
  private readonly trackPenalties: boolean;

  /** `trackPenalties` false skips the sets and counts (the request's penalties are all neutral). */
  constructor(promptTokenIds: readonly number[], trackPenalties: boolean) {
    this.promptTokenIds = promptTokenIds;
    this.trackPenalties = trackPenalties;
    if (trackPenalties) for (const id of promptTokenIds) this.markSeen(id);
  }

  get outputLength(): number {
    return this.outputTokenIds.length;
  }

  append(id: number): void {
    this.outputTokenIds.push(id);
    if (!this.trackPenalties) return;
    this.markSeen(id);
    const count = this.outputCounts.get(id);
    if (count === undefined) {
      this.outputCounts.set(id, 1);
      this.outputTokens.push(id);
    } else {
      this.outputCounts.set(id, count + 1);
    }
  }

  private markSeen(id: number): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.seenTokens.push(id);
  }
}
