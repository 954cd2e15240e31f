import type { AdapterRef } from "../api.js";
import type { LoadedModel } from "../model/load.js";
import type { LinearAdapter } from "../model/types.js";
import type { TokenBitmask } from "../sampling/logits-processors.js";
import type { StructuredConstraint } from "../structured/types.js";
import { EngineError } from "./errors.js";

/**
 * What the runtime needs from the structured-output and LoRA modules, as small interfaces: the
 * scheduler drives them per sequence and per request without knowing how they work.
 */

/** One sequence's position in a structured-output grammar. */
export interface SequenceMatcher {
  /** The tokens the grammar allows next (a set bit allows the token). */
  nextTokenMask(): TokenBitmask | Promise<TokenBitmask>;
  /** Advances past `tokenId`; false (and no change) if the grammar does not allow it here. */
  accept(tokenId: number): boolean;
  /** True once a stop token was accepted: nothing more may follow. */
  readonly isTerminated: boolean;
  /** An independent matcher at the same position (for n > 1 and beam search). */
  fork(): SequenceMatcher | Promise<SequenceMatcher>;
  /** Frees what the matcher holds; it is not used afterwards. */
  dispose(): void;
}

/** Structured outputs for one loaded model: compiles constraints and starts matchers. */
export interface ConstraintBackend {
  /** Throws with the reason (vLLM's message texts) when the constraint cannot be enforced. */
  check(constraint: StructuredConstraint): Promise<void>;
  createMatcher(constraint: StructuredConstraint): Promise<SequenceMatcher>;
  dispose(): void;
}

/** Makes the constraint backend of a model, in the thread that runs it. */
export type ConstraintBackendFactory = (model: LoadedModel) => ConstraintBackend | Promise<ConstraintBackend>;

/** Loads a PEFT adapter directory for a model, in the thread that runs it. */
export type AdapterLoader = (ref: AdapterRef, model: LoadedModel) => LinearAdapter;

/** The backend of a build without structured outputs: every constraint is refused with a clear message. */
export const noConstraintBackend: ConstraintBackendFactory = () => ({
  check: async () => {
    throw new EngineError("unsupported", "Structured outputs are not available on this server: no structured-output backend is installed.");
  },
  createMatcher: async () => {
    throw new EngineError("unsupported", "Structured outputs are not available on this server: no structured-output backend is installed.");
  },
  dispose: () => undefined,
});

/** The loader of a build without LoRA support: every adapter is refused with a clear message. */
export const noAdapterLoader: AdapterLoader = (ref) => {
  throw new EngineError("unsupported", `LoRA adapters are not available on this server, so the adapter '${ref.id}' cannot be loaded.`);
};
