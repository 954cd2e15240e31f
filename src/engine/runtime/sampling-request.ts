import type { GenerateEvent } from "../api.js";
import { ChoiceStream } from "../output/choice-stream.js";
import type { Finish } from "../sampling/stop.js";
import type { ConstraintState } from "./constraint-state.js";
import { EngineRequest, type RequestContext, type RequestSpec } from "./request.js";
import { Sequence } from "./sequence.js";

interface Choice {
  index: number;
  stream: ChoiceStream;
  sequence: Sequence;
  constraint: ConstraintState | null;
  finished: boolean;
}

/**
 * A sampling request (n ≥ 1 choices). The prompt runs once; its KV is then forked into one cache
 * per choice (the first choice keeps the original), and each choice samples from the prompt's last
 * logits with its own `ChoiceStream` (choice i of a seeded request uses seed + i).
 */
export class SamplingRequest extends EngineRequest {
  /** Made up front: bad_words are tokenized once, and each choice's RNG is seeded. */
  private readonly streams: ChoiceStream[];
  private choices: Choice[] | null = null;

  constructor(spec: RequestSpec, context: RequestContext, emit: (event: GenerateEvent) => void) {
    super(spec, context, emit);
    const { model, sampler } = context;
    this.streams = ChoiceStream.forRequest({
      params: spec.params,
      promptTokenIds: spec.prompt,
      eosTokenId: model.tokenizer.eosTokenId,
      extraEosTokenIds: model.eosTokenIds,
      tokenizer: model.tokenizer,
      sampler,
      maxModelLen: model.config.maxPositionEmbeddings,
    });
  }

  sequences(): readonly Sequence[] {
    if (this.promptSequence) return [this.promptSequence];
    return this.choices!.filter((choice) => !choice.finished).map((choice) => choice.sequence);
  }

  get done(): boolean {
    return this.choices?.every((choice) => choice.finished) ?? false;
  }

  async onLogits(sequence: Sequence, row: Float32Array): Promise<void> {
    if (sequence === this.promptSequence) {
      await this.fork(sequence);
      for (const choice of this.choices!) await this.sample(choice, row);
      return;
    }
    const choice = this.choices?.find((candidate) => candidate.sequence === sequence);
    if (!choice || choice.finished) throw new Error(`logits arrived for a sequence request ${this.id} does not run`);
    await this.sample(choice, row);
  }

  abort(): void {
    if (!this.choices) return this.abortBeforeOutput();
    for (const choice of this.choices) {
      if (choice.finished) continue;
      const { text, finish } = choice.stream.abort();
      if (text !== "") this.emit({ type: "output", index: choice.index, tokens: [], text });
      this.finish(choice, finish);
    }
  }

  release(): void {
    this.promptSequence?.release();
    for (const choice of this.choices ?? []) {
      choice.sequence.release();
      choice.constraint?.dispose();
      choice.constraint = null;
    }
  }

  /** The prompt has run: report it, remember its KV, and give every choice its own copy. */
  private async fork(prompt: Sequence): Promise<void> {
    this.sendStarted();
    this.rememberPrompt(prompt);
    const cache = prompt.release()!;
    this.promptSequence = null;
    this.choices = this.streams.map((stream, index) => {
      const sequence = new Sequence([...prompt.tokens]);
      sequence.cache = index === 0 ? cache : cache.fork();
      return { index, stream, sequence, constraint: null, finished: false };
    });
    for (const choice of this.choices) choice.constraint = await this.startConstraint();
  }

  private async sample(choice: Choice, row: Float32Array): Promise<void> {
    const mask = await choice.constraint?.mask();
    const step = choice.stream.step(row, mask);
    const tokenId = step.token.tokenId;
    choice.constraint?.accept(tokenId);
    choice.sequence.tokens.push(tokenId);
    let { text, finish } = step;
    if (!finish && choice.constraint?.terminated) {
      // The grammar is complete (it accepted a stop token that ignore_eos kept from stopping the choice).
      choice.stream.sequence.end({ finishReason: "stop", stopReason: tokenId });
      const rest = choice.stream.abort();
      text += rest.text;
      finish = rest.finish;
    }
    this.emit({ type: "output", index: choice.index, tokens: [step.token], text });
    if (finish) this.finish(choice, finish);
  }

  private finish(choice: Choice, finish: Finish): void {
    choice.finished = true;
    this.emit({ type: "finished", index: choice.index, finishReason: finish.finishReason, stopReason: finish.stopReason });
    this.retire(choice.sequence);
    choice.constraint?.dispose();
    choice.constraint = null;
  }
}
