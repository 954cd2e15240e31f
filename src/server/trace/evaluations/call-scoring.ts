import type { CallSchema } from "../../../store/trace/calls/types.js";
import { feedbackRow } from "../../../store/trace/feedback.js";
import { uuidv7 } from "../../../store/trace/ids.js";
import { isJsonObject } from "../../../store/trace/object-class.js";
import { refName } from "../../../store/trace/refs.js";
import { nowTimestamp } from "../../../store/trace/timestamps.js";
import type { TraceServices } from "../../../trace/services.js";
import { plainJson } from "./llm-model.js";
import type { CallRecorder } from "./recorder.js";
import type { Scorer } from "./scorers.js";

/**
 * `/calls/score`: applies each scorer to each call's output (with the call's inputs as the
 * scorer's columns), as the SDKs' `call.apply_scorer` does: a `<Scorer>.score` call, and
 * `wandb.runnable.<scorer>` feedback on the scored call whose `call_ref` is the scorer call.
 * A scorer that fails leaves its error on its call and no feedback.
 */
export async function scoreCalls(trace: TraceServices, recorder: CallRecorder, calls: CallSchema[], scorers: Scorer[], wbUserId: string, signal: AbortSignal): Promise<void> {
  const projectId = recorder.projectId;
  for (const call of calls) {
    for (const scorer of scorers) {
      signal.throwIfAborted();
      const columns = isJsonObject(call.inputs) ? plainJson(call.inputs) : {};
      const scored = await recorder.score(scorer, call.output ?? null, columns, null);
      if (!("value" in scored)) continue;
      const scorerName = refName(scorer.ref);
      if (!scorerName) continue;
      await trace.calls.insertFeedback([
        feedbackRow({
          id: uuidv7(),
          project_id: projectId,
          weave_ref: `weave:///${projectId}/call/${call.id}`,
          feedback_type: `wandb.runnable.${scorerName}`,
          payload: { output: scored.value },
          runnable_ref: scorer.ref,
          call_ref: `weave:///${projectId}/call/${scored.callId}`,
          wb_user_id: wbUserId,
          created_at: nowTimestamp(),
        }),
      ]);
    }
  }
}
