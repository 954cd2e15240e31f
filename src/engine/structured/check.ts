import { StructuredOutputError, XgrammarCallError } from "./errors.js";
import { type GrammarSource, type PreparedConstraint, parseSource, prepareConstraint } from "./grammar-source.js";
import type { StructuredConstraint } from "./types.js";
import { RecyclingRuntime } from "./xgrammar.js";

/**
 * Requests are checked in an xgrammar instance of their own: xgrammar reports bad input by aborting,
 * which can leak a little memory each time, so the instance is replaced now and then, and the
 * engine's instance (holding tokenizers and compiled grammars) only ever sees input that parsed here.
 */
const checker = new RecyclingRuntime(64);

/**
 * Checks that a constraint is one xgrammar can enforce exactly, without a tokenizer: everything the
 * chat endpoint must know before it answers. Throws `StructuredOutputError` with vLLM's message
 * (`docs/api/chat.md#structured-outputs`); returns the prepared constraint.
 */
export async function checkConstraint(constraint: StructuredConstraint): Promise<PreparedConstraint> {
  const prepared = prepareConstraint(constraint);
  await checkPrepared(prepared);
  return prepared;
}

/** The xgrammar half of `checkConstraint`, for a constraint already prepared. */
export async function checkPrepared(prepared: PreparedConstraint): Promise<void> {
  const runtime = await checker.get();
  const reasonParsing = async (source: GrammarSource): Promise<string | undefined | null> => {
    try {
      await runtime.call(async (api) => (await parseSource(api, source)).dispose());
      return null;
    } catch (error) {
      if (error instanceof XgrammarCallError) return error.reason;
      throw error;
    }
  };
  const reason = await reasonParsing(prepared.source);
  if (reason === null) return;
  // xgrammar's reason (a position, say) refers to what it read; say it about what the client wrote.
  const originalReason = prepared.original ? await reasonParsing(prepared.original) : null;
  throw new StructuredOutputError(prepared.describeFailure(originalReason ?? reason));
}
