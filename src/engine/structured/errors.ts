/**
 * A constraint the engine cannot honour: the request's fault. The chat layer answers 400 with this
 * message, which starts with vLLM's text for the same failure (`docs/api/chat.md#structured-outputs`), so clients that
 * match on vLLM's substrings keep working; xgrammar's reason, when known, follows it.
 */
export class StructuredOutputError extends Error {
  override readonly name = "StructuredOutputError";

  constructor(
    message: string,
    /** The request field at fault, for the error's `param`. */
    readonly param: string = "structured_outputs",
  ) {
    super(message);
  }
}

/** The xgrammar module could not be loaded or initialised: a server fault, never the request's. */
export class XgrammarUnavailableError extends Error {
  override readonly name = "XgrammarUnavailableError";
}

/** A call into xgrammar's C++ code failed; `reason` is what xgrammar printed before it aborted, if anything. */
export class XgrammarCallError extends Error {
  override readonly name = "XgrammarCallError";

  constructor(readonly reason: string | undefined) {
    super(reason ?? "xgrammar rejected the input");
  }
}

/** A Lark grammar that cannot be converted to EBNF with the same language; the message says why. */
export class LarkConversionError extends Error {
  override readonly name = "LarkConversionError";
}
