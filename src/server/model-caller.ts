/**
 * How one API surface reaches a served model through another's pipeline without importing it:
 * server-run evaluations (the trace surface) call models as a client's chat completion would.
 * `app.ts` wires the chat surface's implementation (`chat/completions/model-caller.ts`) in.
 */
export interface ModelCaller {
  /** The whole chat completion of an OpenAI-style request body, for `entity`'s models. */
  complete(entity: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Resolves without generating when `model` would run for `entity`; else the chat endpoint's error (404, 503). */
  check(entity: string, model: string): Promise<void>;
}
