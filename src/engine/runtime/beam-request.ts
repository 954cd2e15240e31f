import type { GenerateEvent } from "../api.js";
import { BeamSearch, type LiveBeam } from "../sampling/beam-search.js";
import type { TokenBitmask } from "../sampling/logits-processors.js";
import type { ConstraintState } from "./constraint-state.js";
import { EngineRequest, type RequestContext, type RequestSpec } from "./request.js";
import { Sequence } from "./sequence.js";

interface Beam {
  sequence: Sequence;
  constraint: ConstraintState | null;
}

/**
 * A beam search request (`use_beam_search`, width n). The prompt runs once as beam 0; each step
 * every live beam gets its logits (possibly in different forward passes, after a preemption), then
 * `BeamSearch` picks the next beams. A new beam continues its parent's KV: the parent's last child
 * takes the cache over, the others copy it. Results go out together at the end (docs/api/chat.md#beam-search).
 */
export class BeamRequest extends EngineRequest {
  private readonly search: BeamSearch;
  /** Live beams by id, once the prompt has run. */
  private beams = new Map<number, Beam>();
  /** Logits of live beams that are ready, waiting for the others. */
  private readonly rows = new Map<number, Float32Array>();
  private finished = false;

  constructor(spec: RequestSpec, context: RequestContext, emit: (event: GenerateEvent) => void) {
    super(spec, context, emit);
    const { params } = spec;
    this.search = new BeamSearch({
      width: params.n,
      maxTokens: spec.maxTokens,
      lengthPenalty: params.lengthPenalty,
      promptLength: spec.prompt.length,
      eosTokenIds: context.model.eosTokenIds,
      ignoreEos: params.ignoreEos,
      includeStopStrInOutput: params.includeStopStrInOutput,
      logprobs: params.logprobs,
    });
  }

  sequences(): readonly Sequence[] {
    if (this.promptSequence) return [this.promptSequence];
    return [...this.beams.values()].map((beam) => beam.sequence);
  }

  get done(): boolean {
    return this.finished;
  }

  async onLogits(sequence: Sequence, row: Float32Array): Promise<void> {
    if (sequence === this.promptSequence) {
      this.sendStarted();
      this.rememberPrompt(sequence);
      this.promptSequence = null;
      this.beams.set(0, { sequence, constraint: await this.startConstraint() });
    }
    const id = [...this.beams].find(([, beam]) => beam.sequence === sequence)?.[0];
    if (id === undefined) throw new Error(`logits arrived for a beam request ${this.id} does not run`);
    this.rows.set(id, row);
    const live = this.search.live;
    if (!live.every((beam) => this.rows.has(beam.id))) return;

    const masks: (TokenBitmask | undefined)[] = [];
    for (const beam of live) masks.push(await this.beams.get(beam.id)!.constraint?.mask());
    const next = this.search.step(
      live.map((beam) => this.rows.get(beam.id)!),
      masks,
    );
    this.rows.clear();
    this.beams = await this.extend(next);
    if (this.search.done) this.sendResults();
  }

  abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.abortBeforeOutput();
  }

  release(): void {
    this.promptSequence?.release();
    for (const beam of this.beams.values()) {
      beam.sequence.release();
      beam.constraint?.dispose();
    }
    this.beams.clear();
  }

  /** The new live beams, each continuing its parent's cache and grammar state with one more token. */
  private async extend(next: readonly LiveBeam[]): Promise<Map<number, Beam>> {
    const children = new Map<number, number>();
    for (const beam of next) children.set(beam.parentId, (children.get(beam.parentId) ?? 0) + 1);
    const extended = new Map<number, Beam>();
    for (const beam of next) {
      const parent = this.beams.get(beam.parentId)!;
      const remaining = children.get(beam.parentId)! - 1;
      children.set(beam.parentId, remaining);
      const last = remaining === 0;
      const sequence = new Sequence([...this.spec.prompt, ...beam.tokenIds]);
      sequence.cache = last ? parent.sequence.release() : parent.sequence.cache!.fork();
      const constraint = parent.constraint ? (last ? parent.constraint : await parent.constraint.fork()) : null;
      constraint?.accept(beam.tokenIds[beam.tokenIds.length - 1]!);
      extended.set(beam.id, { sequence, constraint });
    }
    // Parents without children are done with.
    for (const [id, parent] of this.beams) {
      if (children.has(id)) continue;
      parent.sequence.release();
      parent.constraint?.dispose();
    }
    return extended;
  }

  private sendResults(): void {
    const { tokenizer } = this.context.model;
    const { skipSpecialTokens, spacesBetweenSpecialTokens } = this.spec.params;
    this.search.results().forEach((result, index) => {
      const text = tokenizer.decode(result.textTokenIds, { skipSpecialTokens, spacesBetweenSpecialTokens });
      this.emit({ type: "output", index, tokens: result.tokens, text });
      this.emit({ type: "finished", index, finishReason: result.finish.finishReason, stopReason: result.finish.stopReason });
    });
    this.finished = true;
  }
}
