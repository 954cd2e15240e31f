import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleServer, startExampleServer } from "../src/testing/examples.js";
import { HIGHEST_TERM, LOWEST_TERM, reward, threeTermScenarios } from "./rl.js";

describe("examples/rl.ts on the bundled flywheel/tiny-chat", () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /**
   * A short run of the README's loop (three steps, the default run's 100 held-out questions): the model starts weak
   * on three-term sums, every job trains and advances the step, and the example reports the mean
   * reward per step and the held-out accuracy before and after. How far the default run takes
   * the accuracy is measured over whole runs in the README, not here.
   */
  it("trains step after step and reports reward and held-out accuracy", async () => {
    const { code, stdout, stderr } = await server.runExample("rl.ts", { FLYWHEEL_EXAMPLE_MODEL: "flywheel/tiny-chat", RL_STEPS: "3", RL_GROUP_SIZE: "8" });
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^Registered \S+\/rl-example\/adder-\S+ on flywheel\/tiny-chat/m);
    const before = Number(/^held-out accuracy before training: (\d+)% of 100 questions/m.exec(stdout)![1]);
    expect(before).toBeLessThanOrEqual(30);
    const jobs = [...stdout.matchAll(/^step (\d+): mean reward (\S+); training job: (.+?) → checkpoint step (\d+)$/gm)];
    expect(jobs.map((job) => [Number(job[1]), Number(job[4])])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    // A weak skill, not an absent one: some rollouts are right, so the groups have something to teach.
    expect(jobs.some((job) => Number(job[2]) > 0)).toBe(true);
    expect(stdout).toMatch(/^Held-out accuracy: \d+% → \d+% \(greedy, 100 questions never trained on\)$/m);
    expect(stdout).toMatch(/Chat with the trained model as "wandb-artifact:\/\/\/\S+:step3"/);
  });
});

describe("the RL example's task", () => {
  const { heldOut, training } = threeTermScenarios(100);

  it("holds out questions that training never asks, the same on every run", () => {
    expect(heldOut).toHaveLength(100);
    expect(heldOut.length + training.length).toBe((HIGHEST_TERM - LOWEST_TERM + 1) ** 3);
    const trained = new Set(training.map((scenario) => scenario.question));
    expect(heldOut.some((scenario) => trained.has(scenario.question))).toBe(false);
    expect(threeTermScenarios(100).heldOut).toEqual(heldOut);
    for (const { question, answer } of [...heldOut, ...training.slice(0, 50)]) {
      const terms = /^What is (\d+) \+ (\d+) \+ (\d+)\?$/.exec(question)!.slice(1).map(Number);
      expect(terms.every((term) => term >= LOWEST_TERM && term <= HIGHEST_TERM)).toBe(true);
      expect(answer).toBe(terms[0]! + terms[1]! + terms[2]!);
    }
  });

  it("rewards exactly the sum and nothing else", () => {
    const scenario = { question: "What is 3 + 4 + 7?", answer: 14 };
    expect(reward(scenario, "14")).toBe(1);
    expect(reward(scenario, " 14\n")).toBe(1);
    expect(reward(scenario, "The answer is 14.")).toBe(0);
    expect(reward(scenario, "140")).toBe(0);
    expect(reward(scenario, "13")).toBe(0);
    expect(reward(scenario, null)).toBe(0);
  });
});
