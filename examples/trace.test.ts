import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleServer, startExampleServer } from "../src/testing/examples.js";

describe("examples/trace.ts", () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Two traced RL steps of three groups: the trace read back holds every call the loop made. */
  it("records the RL loop as one trace through the weave SDK and reads it back", async () => {
    const { code, stdout, stderr } = await server.runExample("trace.ts", { RL_STEPS: "2", RL_GROUPS: "3", RL_GROUP_SIZE: "4" });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`Tracing into ${server.url}/trace as project default/rl-example`);
    expect([...stdout.matchAll(/^step (\d+): mean reward \S+, trained → step (\d+)$/gm)].map((match) => [Number(match[1]), Number(match[2])])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(stdout).toMatch(/^Trace \S+: 17 calls, root rl_loop \S+ \(success, \d+ ms\)$/m);
    const counts = Object.fromEntries([...stdout.matchAll(/^ +(\d+) × (\S+)$/gm)].map((match) => [match[2], Number(match[1])]));
    expect(counts).toEqual({ rl_loop: 1, rl_step: 2, rollout_group: 6, "openai.chat.completions.create": 6, train_step: 2 });
    expect(stdout).toMatch(/^ {2}step 1: mean_reward \S+, \d+ gradient steps → step 2$/m);
    expect(stdout).toMatch(/^Token usage summed over the trace: 6 requests, \d+ tokens$/m);
  });
});
