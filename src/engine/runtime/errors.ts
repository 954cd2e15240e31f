/**
 * Why the engine could not serve a request. `invalid_request`: the request itself is wrong (the
 * chat layer validates first, so other callers mostly see these); `unsupported`: this build cannot
 * do what was asked (e.g. a feature whose backend is missing); `worker_failed`: the model's worker
 * thread crashed or could not load the model; `closed`: the engine was shut down; `non_finite_model`:
 * the weights (base or adapter) give NaN or infinite logits, so nothing can be sampled; `internal`:
 * a fault while generating.
 */
export type EngineErrorKind = "invalid_request" | "unsupported" | "worker_failed" | "closed" | "non_finite_model" | "internal";

/** An error of one generation (thrown by its event stream) or of an engine call. */
export class EngineError extends Error {
  constructor(
    readonly kind: EngineErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

/** An error as it crosses a thread boundary: plain data. */
export interface WireError {
  kind: EngineErrorKind;
  message: string;
}

export function toWireError(error: unknown): WireError {
  if (error instanceof EngineError) return { kind: error.kind, message: error.message };
  return { kind: "internal", message: error instanceof Error ? error.message : String(error) };
}

export function fromWireError(error: WireError): EngineError {
  return new EngineError(error.kind, error.message);
}
