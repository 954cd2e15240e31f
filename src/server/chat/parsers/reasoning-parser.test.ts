import { describe, expect, it } from "vitest";
import { type ReasoningStart, ReasoningSplitter, reasoningStartOf, splitReasoning } from "./reasoning-parser.js";

/** Streams `text` in pieces of `size` characters and joins what comes out. */
function streamed(text: string, start: ReasoningStart, size: number) {
  const splitter = new ReasoningSplitter(start);
  let reasoning = "";
  let content = "";
  for (let i = 0; i < text.length; i += size) {
    const delta = splitter.push(text.slice(i, i + size));
    reasoning += delta.reasoning;
    content += delta.content;
  }
  const rest = splitter.finish();
  return { reasoning: reasoning + rest.reasoning, content: content + rest.content };
}

describe("reasoning", () => {
  it("reads where generation starts from the end of the prompt", () => {
    expect(reasoningStartOf("<|im_start|>assistant\n")).toBe("undecided");
    expect(reasoningStartOf("<|im_start|>assistant\n<think>\n")).toBe("reasoning");
    expect(reasoningStartOf("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe("content");
    // A closed block from an earlier turn does not decide the new one.
    expect(reasoningStartOf("<think>a</think>b<|im_end|>\n<|im_start|>assistant\n")).toBe("undecided");
    expect(reasoningStartOf("<|im_start|>assistant\n<think>I was thinking")).toBe("reasoning");
  });

  it("splits finished outputs with Qwen3's semantics", () => {
    expect(splitReasoning("<think>plan</think>answer", "undecided")).toEqual({ reasoning: "plan", content: "answer" });
    expect(splitReasoning("\n<think>plan</think>", "undecided")).toEqual({ reasoning: "plan", content: null });
    expect(splitReasoning("plain answer", "undecided")).toEqual({ reasoning: null, content: "plain answer" });
    expect(splitReasoning("mid <think> tag", "undecided")).toEqual({ reasoning: null, content: "mid <think> tag" });
    expect(splitReasoning("", "undecided")).toEqual({ reasoning: null, content: "" });
    // The template opened <think>: output starts inside reasoning; a generated <think> is dropped.
    expect(splitReasoning("plan</think>answer", "reasoning")).toEqual({ reasoning: "plan", content: "answer" });
    expect(splitReasoning("<think>plan</think>answer", "reasoning")).toEqual({ reasoning: "plan", content: "answer" });
    // Never closed: cut short, all reasoning.
    expect(splitReasoning("<think>still thinking", "undecided")).toEqual({ reasoning: "still thinking", content: null });
    expect(splitReasoning("still thinking", "reasoning")).toEqual({ reasoning: "still thinking", content: null });
    // A tool call ends reasoning and stays as content for the tool parser.
    expect(splitReasoning('hmm<tool_call>{"name": "f"}</tool_call>', "reasoning")).toEqual({ reasoning: "hmm", content: '<tool_call>{"name": "f"}</tool_call>' });
    // Thinking switched off in the prompt: everything is content.
    expect(splitReasoning("<think>x</think>y", "content")).toEqual({ reasoning: null, content: "<think>x</think>y" });
  });

  it("streams exactly what the whole-text split gives, for every chunk size", () => {
    const cases: [string, ReasoningStart][] = [
      ["<think>plan the answer</think>the answer", "undecided"],
      ["  <think>a</think>", "undecided"],
      ["no tags <thin at all", "undecided"],
      ["<thi", "undecided"],
      ["plan</thin></think>done", "reasoning"],
      ["<think>plan</think>", "reasoning"],
      ['x<tool_call>{"a":1}', "reasoning"],
      ["unfinished </thi", "reasoning"],
    ];
    for (const [text, start] of cases) {
      const whole = splitReasoning(text, start);
      for (const size of [1, 2, 3, 5, 100]) {
        const pieces = streamed(text, start, size);
        expect({ reasoning: pieces.reasoning, content: pieces.content }, `${text} / ${size}`).toEqual({
          reasoning: whole.reasoning ?? "",
          content: whole.content ?? "",
        });
      }
    }
  });

  it("never streams a partial tag", () => {
    const splitter = new ReasoningSplitter("reasoning");
    expect(splitter.push("plan</th")).toEqual({ reasoning: "plan", content: "" });
    expect(splitter.push("ink>ans")).toEqual({ reasoning: "", content: "ans" });
    const undecided = new ReasoningSplitter("undecided");
    expect(undecided.push("<thi")).toEqual({ reasoning: "", content: "" });
    expect(undecided.push("nk>x")).toEqual({ reasoning: "x", content: "" });
  });
});
