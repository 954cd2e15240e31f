import { accuracyByTask, evaluateExamples, type TaskAccuracy } from "./evaluate.js";
import type { TinyChatExample } from "./examples.js";
import type { LoadedModel } from "../model/load.js";
import { TaskRandom } from "./random.js";
import { NAME_INTRODUCTIONS, nameExample } from "./tasks/conversation.js";
import { isProbeOnlyName, madeUpName, PEOPLE, UNSEEN_PEOPLE } from "./words.js";

/**
 * The kinds of names the probe asks for, none of which a training example holds in that form:
 * made-up names reserved for the probe (one to three syllables), real names absent from the
 * training list, and training-list names in introductions never trained.
 */
export const NAME_PROBES = ["made_up", "real_unseen", "new_phrasing"] as const;
export type NameProbe = (typeof NAME_PROBES)[number];

/** Introductions no training example uses. */
const UNTRAINED_INTRODUCTIONS = ["Hey there! The name's {name}.", "I'm called {name}.", "Everyone calls me {name}.", "Hi, {name} here."];

/** Per probe: the greeting right after the introduction, and the name asked back later. */
export type NameProbeReport = Record<NameProbe, { greeting: TaskAccuracy; recall: TaskAccuracy }>;

function probeNames(random: TaskRandom, probe: NameProbe, count: number): string[] {
  if (probe === "real_unseen") return UNSEEN_PEOPLE.slice(0, count);
  if (probe === "new_phrasing") return Array.from({ length: count }, () => random.pick(PEOPLE));
  const names = new Set<string>();
  while (names.size < count) {
    const name = madeUpName(random);
    // Four letters at least, so no probe name is also a word of the prompts ("Can", "The").
    if (name.length >= 4 && isProbeOnlyName(name) && !(UNSEEN_PEOPLE as readonly string[]).includes(name)) names.add(name);
  }
  return [...names];
}

/** Each probe's conversations: a greeting example (the introduction alone) and a recall example per name. */
export function nameProbeExamples(seed: number, count: number): Record<NameProbe, { greeting: TinyChatExample[]; recall: TinyChatExample[] }> {
  const random = new TaskRandom(BigInt(seed) * 2n + 1_000_001n);
  const entries = NAME_PROBES.map((probe) => {
    const introductions = probe === "new_phrasing" ? UNTRAINED_INTRODUCTIONS : NAME_INTRODUCTIONS;
    const recall = probeNames(random, probe, count).map((name) => nameExample(random, name, random.pick(introductions)));
    // The greeting is the recall conversation cut after its first assistant turn.
    const greeting = recall.map((example) => ({ ...example, messages: example.messages.slice(0, 2) }));
    return [probe, { greeting, recall }] as const;
  });
  return Object.fromEntries(entries) as Record<NameProbe, { greeting: TinyChatExample[]; recall: TinyChatExample[] }>;
}

/** Greedy accuracy of each probe, through the engine as `evaluateExamples` runs it. */
export async function probeNameCopying(model: LoadedModel, seed: number, count: number): Promise<NameProbeReport> {
  const probes = nameProbeExamples(seed, count);
  const report: Partial<NameProbeReport> = {};
  for (const probe of NAME_PROBES) {
    const accuracy = async (examples: TinyChatExample[]) => accuracyByTask(await evaluateExamples(model, examples)).conversation!;
    report[probe] = { greeting: await accuracy(probes[probe].greeting), recall: await accuracy(probes[probe].recall) };
  }
  return report as NameProbeReport;
}
