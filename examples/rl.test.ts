import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleServer, startExampleServer } from "../src/testing/examples.js";
import { reward, threeTermScenarios } from "./rl.js";

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

describe("the RL example's task", () => {
  const { heldOut, training } = threeTermScenarios(100);

  it("holds out questions that training never asks, the same on every run", () => {
    expect(heldOut).toHaveLength(100);
    expect(heldOut.length + training.length).toBe(30 * 30 * 30);
    const trained = new Set(training.map((scenario) => scenario.question));
    expect(heldOut.some((scenario) => trained.has(scenario.question))).toBe(false);
    expect(threeTermScenarios(100).heldOut).toEqual(heldOut);
    for (const { question, answer } of [...heldOut, ...training.slice(0, 50)]) {
      const terms = /^What is (\d+) \+ (\d+) \+ (\d+)\?$/.exec(question)!.slice(1).map(Number);
      expect(terms.every((term) => term >= 1 && term <= 30)).toBe(true);
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
