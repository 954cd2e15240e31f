import type { GenerateEvent, SampledToken } from "../engine/api.js";
import type { LinearAdapter, LinearName } from "../engine/model/types.js";
import type { Transformer } from "../engine/model/transformer.js";
import type { EngineCore } from "../engine/runtime/engine-core.js";
import type { WireError } from "../engine/runtime/errors.js";
import type { TokenBitmask } from "../engine/sampling/logits-processors.js";
import { argmax } from "../engine/sampling/select.js";
import type { ConstraintBackend, SequenceMatcher } from "../engine/runtime/seams.js";
import type { StructuredConstraint } from "../engine/structured/types.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";

/** Everything one request produced. */
export interface RequestResult {
  events: GenerateEvent[];
  error?: WireError;
}

/** Steps the engine until it is idle; the events (and error) of every request, by id. */
export async function runCore(core: EngineCore, results = new Map<string, RequestResult>()): Promise<Map<string, RequestResult>> {
  while (!core.idle) {
    await core.step();
    collectUpdates(core, results);
  }
  collectUpdates(core, results);
  return results;
}

export function collectUpdates(core: EngineCore, results: Map<string, RequestResult>): void {
  for (const update of core.takeUpdates()) {
    const result = results.get(update.requestId) ?? { events: [] };
    result.events.push(...update.events);
    if (update.end && update.end !== true) result.error = update.end;
    results.set(update.requestId, result);
  }
}

/** The tokens of choice `index`, in order. */
export function choiceTokens(events: readonly GenerateEvent[], index = 0): SampledToken[] {
  return events.flatMap((event) => (event.type === "output" && event.index === index ? event.tokens : []));
}

export function choiceIds(events: readonly GenerateEvent[], index = 0): number[] {
  return choiceTokens(events, index).map((token) => token.tokenId);
}

export function choiceText(events: readonly GenerateEvent[], index = 0): string {
  return events.map((event) => (event.type === "output" && event.index === index ? event.text : "")).join("");
}

export function finishOf(events: readonly GenerateEvent[], index = 0): Extract<GenerateEvent, { type: "finished" }> | undefined {
  return events.find((event): event is Extract<GenerateEvent, { type: "finished" }> => event.type === "finished" && event.index === index);
}

export function startedOf(events: readonly GenerateEvent[]): Extract<GenerateEvent, { type: "started" }> | undefined {
  return events.find((event): event is Extract<GenerateEvent, { type: "started" }> => event.type === "started");
}

/** Greedy decoding straight on the transformer, one sequence, no engine: the reference. */
export function greedyReference(transformer: Transformer, prompt: readonly number[], tokens: number, adapter?: LinearAdapter): number[] {
  const cache = transformer.createCache();
  let [logits] = transformer.forward([{ cache, tokens: prompt, adapter }]);
  const output: number[] = [];
  for (let i = 0; i < tokens; i++) {
    const next = argmax(logits!);
    output.push(next);
    [logits] = transformer.forward([{ cache, tokens: [next], adapter }]);
  }
  return output;
}

/** A rank-1 change W + scale·u vᵀ of one linear layer: a real adapter for tests of adapter plumbing. */
export class RankOneAdapter implements LinearAdapter {
  constructor(
    readonly layer: number,
    readonly name: LinearName,
    readonly u: Float32Array,
    readonly v: Float32Array,
  ) {}

  apply(layer: number, name: LinearName, x: Float32Array, out: Float32Array, rows: number): void {
    if (layer !== this.layer || name !== this.name) return;
    for (let r = 0; r < rows; r++) {
      let projection = 0;
      for (let i = 0; i < this.v.length; i++) projection += x[r * this.v.length + i]! * this.v[i]!;
      for (let o = 0; o < this.u.length; o++) out[r * this.u.length + o] += this.u[o]! * projection;
    }
  }
}

/**
 * A small but real structured-output backend for `choice` constraints: the output must be one of
 * the choices' exact token sequences, then a stop token. It lets tests drive the scheduler's
 * constraint seam without the xgrammar backend.
 */
export class ChoiceConstraintBackend implements ConstraintBackend {
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly vocabSize: number,
    private readonly stopTokenIds: readonly number[],
  ) {}

  async check(constraint: StructuredConstraint): Promise<void> {
    if (constraint.kind !== "choice") throw new Error(`only choice constraints are supported here, got ${constraint.kind}`);
  }

  async createMatcher(constraint: StructuredConstraint): Promise<SequenceMatcher> {
    await this.check(constraint);
    const sequences = (constraint as { choices: string[] }).choices.map((choice) => this.tokenizer.encode(choice));
    return new ChoiceMatcher(sequences, this.vocabSize, this.stopTokenIds, []);
  }

  dispose(): void {}
}

class ChoiceMatcher implements SequenceMatcher {
  isTerminated = false;

  constructor(
    private readonly sequences: readonly number[][],
    private readonly vocabSize: number,
    private readonly stopTokenIds: readonly number[],
    private readonly accepted: number[],
  ) {}

  nextTokenMask(): TokenBitmask {
    const mask = new Int32Array(Math.ceil(this.vocabSize / 32));
    const allow = (id: number) => (mask[id >>> 5] |= 1 << (id & 31));
    for (const sequence of this.live()) {
      if (sequence.length === this.accepted.length) this.stopTokenIds.forEach(allow);
      else allow(sequence[this.accepted.length]!);
    }
    return mask;
  }

  accept(tokenId: number): boolean {
    if (this.isTerminated) return false;
    const live = this.live();
    if (this.stopTokenIds.includes(tokenId) && live.some((sequence) => sequence.length === this.accepted.length)) {
      this.isTerminated = true;
      return true;
    }
    if (!live.some((sequence) => sequence[this.accepted.length] === tokenId)) return false;
    this.accepted.push(tokenId);
    return true;
  }

  fork(): SequenceMatcher {
    const copy = new ChoiceMatcher(this.sequences, this.vocabSize, this.stopTokenIds, [...this.accepted]);
    copy.isTerminated = this.isTerminated;
    return copy;
  }

  dispose(): void {}

  private live(): number[][] {
    return this.sequences.filter((sequence) => sequence.length >= this.accepted.length && this.accepted.every((id, i) => sequence[i] === id));
  }
}
