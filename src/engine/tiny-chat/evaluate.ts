import type { LoadedModel } from "../model/load.js";
import { EngineCore } from "../runtime/engine-core.js";
import { resolveSchedulerOptions } from "../runtime/options.js";
import type { ConstraintBackendFactory } from "../runtime/seams.js";
import { noConstraintBackend } from "../runtime/seams.js";
import { defaultSamplingParams } from "../sampling/params.js";
import { checkReply } from "./checks.js";
import { TASK_NAMES, type TaskName, type TinyChatExample } from "./examples.js";
import { renderExample } from "./tokenizer.js";

export interface ExampleResult {
  example: TinyChatExample;
  reply: string;
  correct: boolean;
}

export interface TaskAccuracy {
  correct: number;
  total: number;
  accuracy: number;
}

/**
 * Greedy replies of the engine (`EngineCore`: the scheduler, batching and sampler that serve chat
 * requests) to each example's prompt (its conversation without the final reply, with a generation
 * prompt), checked against the example's expectation. Special tokens stay in the text so tool
 * calls can be read.
 */
export async function evaluateExamples(model: LoadedModel, examples: readonly TinyChatExample[], options: { maxTokens?: number; constraints?: ConstraintBackendFactory } = {}): Promise<ExampleResult[]> {
  const core = new EngineCore({ model, scheduler: resolveSchedulerOptions({ maxRunningSequences: 32 }), constraints: await (options.constraints ?? noConstraintBackend)(model) });
  const params = defaultSamplingParams({ temperature: 0, maxTokens: options.maxTokens ?? 96, skipSpecialTokens: false });
  examples.forEach((example, index) => {
    const prompt = renderExample({ messages: example.messages.slice(0, -1), ...(example.tools ? { tools: example.tools } : {}) }, true);
    core.submit({ requestId: String(index), promptTokenIds: model.tokenizer.encode(prompt, { addSpecialTokens: false }), params });
  });
  const replies = new Map<string, string>();
  while (!core.idle) {
    await core.step();
    for (const update of core.takeUpdates()) {
      if (update.end && update.end !== true) throw new Error(`evaluation request ${update.requestId} failed: ${update.end.message}`);
      for (const event of update.events) if (event.type === "output") replies.set(update.requestId, (replies.get(update.requestId) ?? "") + event.text);
    }
  }
  return examples.map((example, index) => {
    const reply = replies.get(String(index)) ?? "";
    return { example, reply, correct: checkReply(example.expected, reply) };
  });
}

/** Accuracy per task, over the tasks present. */
export function accuracyByTask(results: readonly ExampleResult[]): Partial<Record<TaskName, TaskAccuracy>> {
  const byTask: Partial<Record<TaskName, TaskAccuracy>> = {};
  for (const task of TASK_NAMES) {
    const mine = results.filter((result) => result.example.task === task);
    if (mine.length === 0) continue;
    const correct = mine.filter((result) => result.correct).length;
    byTask[task] = { correct, total: mine.length, accuracy: correct / mine.length };
  }
  return byTask;
}
