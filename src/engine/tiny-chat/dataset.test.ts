import { describe, expect, it } from "vitest";
import { checkReply } from "./checks.js";
import { generateExamples, splitOf, TASKS } from "./dataset.js";
import { TASK_NAMES } from "./examples.js";
import { TaskRandom } from "./random.js";
import { renderExample } from "./tokenizer.js";
import { convertUnits, TINY_CHAT_TOOLS } from "./tools.js";

describe("generateExamples", () => {
  const train = generateExamples({ seed: 7, count: 600, split: "train" });
  const heldOut = generateExamples({ seed: 7, count: 200, split: "heldout" });

  it("is deterministic for a seed and differs between seeds", () => {
    expect(generateExamples({ seed: 7, count: 50, split: "train" })).toEqual(train.slice(0, 50));
    expect(generateExamples({ seed: 8, count: 50, split: "train" })).not.toEqual(train.slice(0, 50));
  });

  it("keeps the splits apart by key: no held-out key occurs in training", () => {
    const trainKeys = new Set(train.map((example) => example.key));
    expect(heldOut.every((example) => !trainKeys.has(example.key))).toBe(true);
    expect(train.every((example) => splitOf(example.key) === "train")).toBe(true);
    expect(heldOut.every((example) => splitOf(example.key) === "heldout")).toBe(true);
    // Roughly one key in ten is held out.
    const random = new TaskRandom(11);
    const keys = new Set(Array.from({ length: 3000 }, () => TASKS[random.pick(TASK_NAMES)].generate(random).key));
    const heldOutShare = [...keys].filter((key) => splitOf(key) === "heldout").length / keys.size;
    expect(heldOutShare).toBeGreaterThan(0.07);
    expect(heldOutShare).toBeLessThan(0.13);
  });

  it("draws every task in about its share of the mixture", () => {
    for (const task of TASK_NAMES) {
      const share = train.filter((example) => example.task === task).length / train.length;
      expect(Math.abs(share - TASKS[task].weight), task).toBeLessThan(0.06);
    }
  });

  it("ends every example with the assistant reply that passes its own check", () => {
    for (const example of [...train, ...heldOut]) {
      const last = example.messages[example.messages.length - 1]!;
      expect(last.role).toBe("assistant");
      if (typeof last.content === "string" && last.content.startsWith("[")) {
        // The reply `tool_choice: "required"` constrains output to, for the call expected.
        const { name, arguments: args } = example.expected as { name: string; arguments: unknown };
        expect(JSON.parse(last.content)).toEqual([{ name, parameters: args }]);
        continue;
      }
      // A reply as the template writes it: the content, or the Hermes block of the tool call.
      const rendered = renderExample({ messages: [last], ...(example.tools ? { tools: example.tools } : {}) });
      const reply = rendered.slice(rendered.lastIndexOf("<|im_start|>assistant\n") + "<|im_start|>assistant\n".length, rendered.lastIndexOf("<|im_end|>"));
      expect(checkReply(example.expected, reply), `${example.key}: ${reply}`).toBe(true);
    }
  });

  it("teaches the output of tool_choice required in about one tool call in four", () => {
    const calls = generateExamples({ seed: 2, count: 600, split: "train", tasks: ["tool_call"] });
    const arrays = calls.filter((example) => String(example.messages[example.messages.length - 1]!.content).startsWith("["));
    expect(arrays.length / calls.length).toBeGreaterThan(0.18);
    expect(arrays.length / calls.length).toBeLessThan(0.32);
  });

  it("only lists tools a tool task needs, always including the one called", () => {
    for (const example of train.filter((candidate) => candidate.task === "tool_call")) {
      const expected = example.expected as { name: string };
      expect(example.tools!.map((tool) => tool.function.name)).toContain(expected.name);
      expect(example.tools!.every((tool) => TINY_CHAT_TOOLS.includes(tool))).toBe(true);
    }
    expect(train.filter((example) => example.task === "arithmetic").every((example) => example.tools === undefined)).toBe(true);
  });
});

describe("task content", () => {
  it("computes arithmetic answers and unit conversions correctly", () => {
    for (const example of generateExamples({ seed: 3, count: 100, split: "train", tasks: ["arithmetic"] })) {
      const question = String(example.messages.find((message) => message.role === "user")!.content);
      const [a, b] = question.match(/\d+/g)!.map(Number);
      const subtract = /-|minus|Subtract|take/.test(question);
      const expected = subtract ? (question.startsWith("Subtract") || question.includes("take") ? b! - a! : a! - b!) : a! + b!;
      expect(example.expected).toEqual({ kind: "number", value: expected });
      expect(expected).toBeGreaterThanOrEqual(0);
    }
    expect(convertUnits(10, "km", "miles")).toBe(6.21);
    expect(convertUnits(100, "celsius", "fahrenheit")).toBe(212);
    expect(convertUnits(212, "fahrenheit", "celsius")).toBe(100);
    expect(() => convertUnits(1, "km", "kg")).toThrow(/no conversion/);
  });
});
