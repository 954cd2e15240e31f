import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleServer, startExampleServer } from "../src/testing/examples.js";
import { additionScenarios, reward } from "./rl.js";

describe("examples/rl.ts", () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /**
   * Six RL steps of 12 groups on the random fixture model, at the rate that suits it. The reward's
   * partial credit for any number gives even a model that cannot add a signal, but on a random
   * model the rise is noisy: over three steps the final reward fell below step 0's in one trial of
   * eight; over six steps the best later step beat step 0 (0.032) by 0.05–0.3 in each of five
   * trials. art-rl-loop.test.ts shows a steady rise with more rollouts.
   */
  it("trains step after step and the mean reward rises", async () => {
    const { code, stdout, stderr } = await server.runExample("rl.ts", { RL_STEPS: "6", RL_GROUPS: "12", RL_LEARNING_RATE: "0.01" });
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^Registered \S+\/rl-example\/adder-\S+ on fixture\/tiny-qwen2/m);
    // A job whose groups all got equal rewards trains nothing but still advances the step.
    const jobs = [...stdout.matchAll(/training job: (.+?) → checkpoint step (\d+)/g)];
    expect(jobs.map((job) => Number(job[2]))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(jobs[0]![1]).toMatch(/^\d+ gradient steps$/);
    const rewards = /Mean reward per step: (.*)$/m.exec(stdout)![1]!.split(" → ").map(Number);
    expect(rewards).toHaveLength(7);
    expect(Math.max(...rewards.slice(1))).toBeGreaterThan(rewards[0]! + 0.005);
    expect(stdout).toMatch(/Chat with the trained model as "wandb-artifact:\/\/\/\S+:step6"/);
  });
});

describe("the RL example's reward", () => {
  const [scenario] = additionScenarios(1);
  it("is 1 for the right sum, partial for a close number, 0 without one", () => {
    expect(scenario).toEqual({ question: "What is 11 + 3?", answer: 14 });
    expect(reward(scenario!, "14")).toBe(1);
    expect(reward(scenario!, "The answer is 14.")).toBe(1);
    expect(reward(scenario!, "11 + 3 = 14")).toBe(0.1 + 0.4 * (1 - 3 / 14));
    expect(reward(scenario!, "1000")).toBe(0.1);
    expect(reward(scenario!, "seven")).toBe(0);
    expect(reward(scenario!, null)).toBe(0);
  });
});
