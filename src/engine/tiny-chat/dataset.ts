import type { TaskName, TinyChatExample } from "./examples.js";
import { TaskRandom, stableHash } from "./random.js";
import { arithmeticExample, threeTermExample } from "./tasks/arithmetic.js";
import { conversationExample } from "./tasks/conversation.js";
import { jsonExample } from "./tasks/json-extraction.js";
import { toolAnswerExample, toolCallExample } from "./tasks/tool-calls.js";
import { TINY_CHAT_TOOLS } from "./tools.js";

export type Split = "train" | "heldout";

/** Each task's generator and its share of the training mixture. */
export const TASKS: Record<TaskName, { weight: number; generate: (random: TaskRandom) => TinyChatExample }> = {
  arithmetic: { weight: 0.285, generate: arithmeticExample },
  tool_call: { weight: 0.15, generate: toolCallExample },
  tool_answer: { weight: 0.14, generate: toolAnswerExample },
  json: { weight: 0.205, generate: jsonExample },
  conversation: { weight: 0.19, generate: conversationExample },
  three_terms: { weight: 0.03, generate: threeTermExample },
};

const SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are Tiny Chat, a small helpful assistant.", "Answer briefly."];

/** One key in ten is held out; the split depends on the key alone, so it is the same for every seed. */
export function splitOf(key: string): Split {
  return stableHash(key) % 10 === 0 ? "heldout" : "train";
}

export interface GenerateOptions {
  seed: number;
  count: number;
  split: Split;
  /** Only these tasks (default all), in their mixture proportions. */
  tasks?: readonly TaskName[];
}

/**
 * `count` examples of one split, drawn from the task mixture with a seeded generator (same seed,
 * same examples). Some get a system prompt (with tools, only the first one, to keep the distinct
 * system turns few), and some conversations carry the example tools without needing them, so the
 * model learns to answer directly when no tool is called for.
 */
export function generateExamples(options: GenerateOptions): TinyChatExample[] {
  const tasks = options.tasks ?? (Object.keys(TASKS) as TaskName[]);
  const total = tasks.reduce((sum, task) => sum + TASKS[task].weight, 0);
  const random = new TaskRandom(BigInt(options.seed) * 2n + (options.split === "train" ? 0n : 1n));
  const examples: TinyChatExample[] = [];
  while (examples.length < options.count) {
    let roll = random.int(1_000_000) / 1_000_000;
    let task = tasks[tasks.length - 1]!;
    for (const candidate of tasks) {
      roll -= TASKS[candidate].weight / total;
      if (roll < 0) {
        task = candidate;
        break;
      }
    }
    const example = TASKS[task].generate(random);
    if (splitOf(example.key) !== options.split) continue;
    if (task === "conversation" && random.chance(0.1)) example.tools = [...TINY_CHAT_TOOLS];
    if (random.chance(0.15)) example.messages.unshift({ role: "system", content: example.tools ? SYSTEM_PROMPTS[0]! : random.pick(SYSTEM_PROMPTS) });
    examples.push(example);
  }
  return examples;
}
