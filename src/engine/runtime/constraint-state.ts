import type { TokenBitmask } from "../sampling/logits-processors.js";
import { EngineError } from "./errors.js";
import type { SequenceMatcher } from "./seams.js";

/**
 * A sequence's structured-output state: its grammar matcher, and whether the grammar applies yet.
 * With `startsAfterTokenId` (a reasoning model thinks freely first) the grammar takes over from
 * the token after that one; until then nothing is masked.
 */
export class ConstraintState {
  private constructor(
    private readonly matcher: SequenceMatcher,
    private active: boolean,
    private readonly startsAfterTokenId: number | undefined,
  ) {}

  static start(matcher: SequenceMatcher, startsAfterTokenId: number | undefined): ConstraintState {
    return new ConstraintState(matcher, startsAfterTokenId === undefined, startsAfterTokenId);
  }

  /** The mask for the next token, or undefined while the grammar does not apply. */
  async mask(): Promise<TokenBitmask | undefined> {
    if (!this.active || this.matcher.isTerminated) return undefined;
    return this.matcher.nextTokenMask();
  }

  /** Records a sampled token. */
  accept(tokenId: number): void {
    if (!this.active) {
      if (tokenId === this.startsAfterTokenId) this.active = true;
      return;
    }
    if (!this.matcher.accept(tokenId)) throw new EngineError("internal", `the sampled token ${tokenId} is not allowed by the structured-output grammar`);
  }

  /** The grammar accepted its stop token: the output is complete. */
  get terminated(): boolean {
    return this.active && this.matcher.isTerminated;
  }

  async fork(): Promise<ConstraintState> {
    return new ConstraintState(await this.matcher.fork(), this.active, this.startsAfterTokenId);
  }

  dispose(): void {
    this.matcher.dispose();
  }
}
