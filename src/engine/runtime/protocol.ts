import type { KernelsChoice } from "../kernels/settings.js";
import type { StructuredConstraint } from "../structured/types.js";
import type { RequestUpdate } from "./engine-core.js";
import type { WireError } from "./errors.js";
import type { WireGenerateRequest } from "./intake.js";
import type { SchedulerOptions } from "./options.js";

/**
 * The messages between a `LocalEngine` (main thread) and its engine thread. They stay small: token
 * ids, sampled tokens with their logprobs, text deltas and finish reasons; logits never cross.
 */

/** The engine thread's `workerData`. */
export interface EngineThreadInit {
  modelId: string;
  dir: string;
  scheduler: SchedulerOptions;
  /** Kernel backend; unset follows FLYWHEEL_KERNELS (native when built). */
  kernels?: KernelsChoice;
}

export type EngineCall = { kind: "checkConstraint"; constraint: StructuredConstraint } | { kind: "stats" };

export type ToEngineThread =
  | { type: "generate"; request: WireGenerateRequest }
  | { type: "cancel"; requestId: string }
  | { type: "call"; callId: number; call: EngineCall }
  /** Abort everything, report `closed`, and stop. */
  | { type: "close" };

export type FromEngineThread =
  | { type: "ready" }
  | { type: "load-failed"; error: WireError }
  /** What the requests did in one step. */
  | { type: "updates"; updates: RequestUpdate[] }
  | { type: "reply"; callId: number; ok: true; value: unknown }
  | { type: "reply"; callId: number; ok: false; error: WireError }
  | { type: "closed" };
