import type { LoadedModel } from "../model/load.js";
import { StructuredOutputError } from "../structured/errors.js";
import type { ConstraintMatcher } from "../structured/matcher.js";
import { StructuredOutputs } from "../structured/structured-outputs.js";
import type { StructuredConstraint } from "../structured/types.js";
import { EngineError } from "./errors.js";
import type { ConstraintBackend, ConstraintBackendFactory, SequenceMatcher } from "./seams.js";

/**
 * Structured outputs through xgrammar (`src/engine/structured/`) for one model, its EOS ids as the
 * grammar's stop tokens. xgrammar's tokenizer tables are built on the first constrained request,
 * so models that never see one do not pay for them. A constraint xgrammar cannot enforce is the
 * request's fault (`invalid_request`, with vLLM's message).
 */
export const xgrammarBackend: ConstraintBackendFactory = (model: LoadedModel): ConstraintBackend => {
  let outputs: Promise<StructuredOutputs> | undefined;
  const ready = () => {
    if (!outputs) {
      outputs = StructuredOutputs.create({ tokenizer: model.tokenizer, vocabSize: model.config.vocabSize, stopTokenIds: model.eosTokenIds });
      outputs.catch(() => (outputs = undefined)); // try again next time
    }
    return outputs;
  };
  return {
    check: (constraint) => asEngineErrors(async () => (await ready()).check(constraint)),
    createMatcher: (constraint: StructuredConstraint) => asEngineErrors(async () => new XgrammarMatcher(await (await ready()).createMatcher(constraint))),
    dispose: () =>
      void outputs?.then(
        (loaded) => loaded.dispose(),
        () => undefined,
      ),
  };
};

class XgrammarMatcher implements SequenceMatcher {
  constructor(private readonly matcher: ConstraintMatcher) {}

  async nextTokenMask(): Promise<Int32Array> {
    return (await this.matcher.nextTokenMask()).words;
  }

  accept(tokenId: number): boolean {
    return this.matcher.accept(tokenId);
  }

  get isTerminated(): boolean {
    return this.matcher.isTerminated;
  }

  async fork(): Promise<SequenceMatcher> {
    return new XgrammarMatcher(await this.matcher.fork());
  }

  dispose(): void {
    this.matcher.dispose();
  }
}

async function asEngineErrors<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof StructuredOutputError) throw new EngineError("invalid_request", error.message);
    throw error;
  }
}
