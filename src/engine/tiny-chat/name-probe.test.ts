import { describe, expect, it } from "vitest";
import { generateExamples } from "./dataset.js";
import { NAME_PROBES, nameProbeExamples } from "./name-probe.js";
import { renderExample } from "./tokenizer.js";
import { PEOPLE, UNSEEN_PEOPLE } from "./words.js";

describe("the name probe", () => {
  const probes = nameProbeExamples(1, 100);
  const nameOf = (example: { expected: unknown }) => (example.expected as { values: string[] }).values[0]!;

  it("asks for names no training conversation holds (the made-up and real ones)", () => {
    const training = generateExamples({ seed: 1, count: 20_000, split: "train" })
      .map((example) => renderExample(example))
      .join("\n");
    const newNames = [...probes.made_up.recall, ...probes.real_unseen.recall].map(nameOf);
    expect(newNames.length).toBe(140);
    for (const name of newNames) expect(new RegExp(`\\b${name}\\b`).test(training), name).toBe(false);
    // Training does hold made-up names: two thirds of its names are.
    expect(training.match(/Nice to meet you, (\w+)!/g)!.length).toBeGreaterThan(500);
  });

  it("greets and recalls the same names, with the training list's names in untrained phrasings", () => {
    for (const probe of NAME_PROBES) expect(probes[probe].greeting.map(nameOf)).toEqual(probes[probe].recall.map(nameOf));
    expect(probes.real_unseen.recall.map(nameOf)).toEqual([...UNSEEN_PEOPLE]);
    for (const example of probes.new_phrasing.recall) expect(PEOPLE).toContain(nameOf(example));
    expect(probes.made_up.greeting[0]!.messages).toHaveLength(2);
    expect(probes.made_up.greeting[0]!.messages[1]!.content).toBe(`Nice to meet you, ${nameOf(probes.made_up.greeting[0]!)}! How can I help you?`);
  });
});
