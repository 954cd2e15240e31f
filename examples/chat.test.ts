import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_MODEL, type ExampleServer, startExampleServer } from "../src/testing/examples.js";

/** The text after `label` on the line that has it. */
function lineAfter(stdout: string, label: string): string {
  const line = stdout.split("\n").find((candidate) => candidate.includes(label));
  if (line === undefined) throw new Error(`no line with '${label}' in:\n${stdout}`);
  return line.slice(line.indexOf(label) + label.length);
}

/**
 * examples/chat.ts against a real server, which serves the small random fixture model and the
 * bundled flywheel/tiny-chat. On the fixture, a random model writes nonsense, so what is checked is
 * what the server guarantees: a reply, a stream of chunks, and JSON that follows the schema.
 */
describe("examples/chat.ts", () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("runs a plain, a streamed, a structured and a tool-calling request", async () => {
    const { code, stdout, stderr } = await server.runExample("chat.ts");
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`Chatting with ${EXAMPLE_MODEL}`);
    for (const part of ["== 1. A plain request", "== 2. Streaming", "== 3. Structured output", "== 4. A tool call"]) expect(stdout).toContain(part);

    expect(lineAfter(stdout, "(finish_reason ")).toMatch(/^(stop|length); \d+ prompt tokens, \d+ completion tokens\)/);
    const [, chunks, characters] = /\((\d+) chunks with text, (\d+) characters\)/.exec(stdout)!;
    expect(Number(chunks)).toBeGreaterThan(0);
    expect(Number(characters)).toBeGreaterThan(0);

    const person = JSON.parse(lineAfter(stdout, "  parsed: ")) as Record<string, unknown>;
    expect(Object.keys(person).sort()).toEqual(["age", "name"]);
    expect(typeof person.name).toBe("string");
    expect((person.name as string).length).toBeLessThanOrEqual(24);
    expect(Number.isInteger(person.age)).toBe(true);
  });

  it("names the served models when the model is not served", async () => {
    const { code, stderr } = await server.runExample("chat.ts", { FLYWHEEL_EXAMPLE_MODEL: "nobody/nothing" });
    expect(code).toBe(1);
    expect(stderr).toContain(`does not serve the model 'nobody/nothing'. It serves: ${EXAMPLE_MODEL}`);
  });

  it("says when the server refuses the key", async () => {
    const { code, stderr } = await server.runExample("chat.ts", { FLYWHEEL_API_KEY: "not-a-key-0123456789" });
    expect(code).toBe(1);
    expect(stderr).toContain("does not accept FLYWHEEL_API_KEY");
  });

  /** The same example on the bundled flywheel/tiny-chat, as the README's walkthrough runs it: the replies are right, not just well formed (greedy). */
  it("adds with its column work as reasoning, greets, extracts JSON and calls the weather tool", async () => {
    const { code, stdout, stderr } = await server.runExample("chat.ts", { FLYWHEEL_EXAMPLE_MODEL: "flywheel/tiny-chat" });
    expect(code, stderr).toBe(0);
    expect(stdout, stdout).toMatch(/^> What is 12 \+ 7\?\n {2}\(reasoning: "12 \+ 7\\nones: 2 \+ 7 = 9\\ntens: 1 \+ 0 \+ 0 = 1"\)\n< 19$/m);
    expect(/^> Who are you\?\n< (.*)$/m.exec(stdout)?.[1]?.toLowerCase()).toContain("tiny chat");
    expect(JSON.parse(lineAfter(stdout, "  parsed: "))).toEqual({ name: "Maria", age: 34 });
    expect(lineAfter(stdout, "< tool call: ")).toBe('get_weather({"city":"Paris"})');
  });
});
