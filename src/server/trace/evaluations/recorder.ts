import { callEnd, callStart, type NewCall, publishedOpRef } from "../../../trace/evaluations/call-writes.js";
import { PLACEHOLDER_OP_SOURCE } from "../../../trace/object-layouts.js";
import type { TraceServices } from "../../../trace/services.js";
import { type ChatRunner, type LlmModel, type Prediction, predict, predictionMessages } from "./llm-model.js";
import { judgePrompt, type Scorer, scoreArguments } from "./scorers.js";

/** A started call: end it with an output or an exception. */
export interface OpenCall {
  id: string;
  traceId: string;
  end(result: { output?: unknown; summary?: Record<string, unknown>; exception?: string | null }): Promise<void>;
}

export const MODEL_PREDICT_OP = "LLMStructuredCompletionModel.predict";

/** `summary.usage` of one model call, keyed by the model as Weave keys LLM usage. */
export function usageSummary(modelId: string, usage: Prediction["usage"]): Record<string, unknown> {
  return { usage: { [modelId]: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens, requests: 1 } } };
}

/**
 * Records the calls of server-run evaluations and scorings the way the SDKs record theirs: each
 * call written when it starts (so progress is visible) and again when it ends, under ops
 * published once per recorder.
 */
export class CallRecorder {
  private readonly ops = new Map<string, Promise<string>>();

  constructor(
    private readonly trace: TraceServices,
    readonly projectId: string,
    private readonly wbUserId: string,
    private readonly chat: ChatRunner,
    private readonly signal: AbortSignal,
  ) {}

  opRef(name: string): Promise<string> {
    let ref = this.ops.get(name);
    if (!ref) {
      ref = publishedOpRef(this.trace.v2, this.projectId, name, PLACEHOLDER_OP_SOURCE, this.wbUserId);
      this.ops.set(name, ref);
    }
    return ref;
  }

  async start(op: string, call: Omit<NewCall, "projectId" | "opName" | "wbUserId">): Promise<OpenCall> {
    const start = callStart({ ...call, projectId: this.projectId, opName: await this.opRef(op), wbUserId: this.wbUserId });
    await this.trace.calls.writeCalls([{ start }]);
    return {
      id: start.id,
      traceId: start.traceId,
      end: (result) => this.trace.calls.writeCalls([{ end: callEnd(this.projectId, start.id, result) }]),
    };
  }

  /** A model prediction as a `LLMStructuredCompletionModel.predict` call under `parent`. */
  async predict(model: LlmModel, modelInput: unknown, inputs: { userInput?: unknown; templateVars: Record<string, unknown> }, parent: OpenCall | null): Promise<Prediction | { error: string }> {
    const recorded: Record<string, unknown> = { self: modelInput, ...inputs.templateVars };
    if (inputs.userInput !== undefined) recorded.user_input = inputs.userInput;
    const call = await this.start(MODEL_PREDICT_OP, { parentId: parent?.id ?? null, traceId: parent?.traceId, inputs: recorded });
    try {
      this.signal.throwIfAborted();
      const prediction = await predict(model, predictionMessages(model, inputs.userInput, inputs.templateVars), this.chat, this.signal);
      await call.end({ output: prediction.output, summary: usageSummary(model.modelId, prediction.usage) });
      return prediction;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await call.end({ exception: message });
      return { error: message };
    }
  }

  /**
   * A scorer applied to an output, as a `<Scorer class>.score` call under `parent` (a new trace
   * when there is none); a judge's own prediction is a call beneath it. The score, or an error.
   */
  async score(scorer: Scorer, output: unknown, row: Record<string, unknown>, parent: OpenCall | null): Promise<{ value: unknown; callId: string } | { error: string; callId: string }> {
    let args: Record<string, unknown>;
    try {
      args = scoreArguments(scorer, row);
    } catch (error) {
      const call = await this.start(`${scorer.className}.score`, { parentId: parent?.id ?? null, traceId: parent?.traceId, inputs: { self: scorer.ref, output } });
      await call.end({ exception: (error as Error).message });
      return { error: (error as Error).message, callId: call.id };
    }
    const call = await this.start(`${scorer.className}.score`, {
      parentId: parent?.id ?? null,
      traceId: parent?.traceId,
      // The scorer's name (its key in the scores) names the call, so results can point at it.
      displayName: scorer.name,
      inputs: { self: scorer.ref, output, ...args },
      attributes: { _weave_eval_meta: { score: true } },
    });
    try {
      let value: unknown;
      if (scorer.kind === "builtin") value = scorer.score(output, args);
      else {
        const judged = await this.predict(scorer.model, scorer.modelValue, { userInput: [{ role: "user", content: judgePrompt(scorer, output, args) }], templateVars: {} }, call);
        if ("error" in judged) throw new Error(`The judge model failed: ${judged.error}`);
        value = judged.output;
      }
      await call.end({ output: value });
      return { value, callId: call.id };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await call.end({ exception: message });
      return { error: message, callId: call.id };
    }
  }
}
