import { describe, expect, it } from "vitest";
import { sampledChoice } from "../testing/training.js";
import { isChoice, type Trajectory, type TrajectoryGroup } from "../engine/train/trajectory.js";
import { groupRewardsVary, hasTrainableItem, summarizeTrainability } from "./trajectories.js";

const traj = (reward: number, items: unknown[] = [{ role: "user", content: "q" }, sampledChoice("a")]) =>
  ({ reward, messages_and_choices: items, tools: null, additional_histories: [], metrics: {}, metadata: {}, logs: [] }) as unknown as Trajectory;
const group = (...trajectories: Trajectory[]) => ({ trajectories, exceptions: [], metadata: {}, metrics: {}, logs: [] }) as TrajectoryGroup;

describe("trajectory checks", () => {
  it("tells Choices from messages by a message object without a role", () => {
    expect(isChoice(sampledChoice("x"))).toBe(true);
    expect(isChoice({ message: { content: "x" } })).toBe(true);
    expect(isChoice({ role: "assistant", content: "x", message: {} })).toBe(false);
    expect(isChoice({ role: "user", content: "x" })).toBe(false);
    expect(isChoice({ message: "x" })).toBe(false);
    expect(isChoice(null)).toBe(false);
  });

  it("counts a group as trainable only with two or more unequal rewards", () => {
    expect(groupRewardsVary(group(traj(1)))).toBe(false);
    expect(groupRewardsVary(group(traj(1), traj(1 + 1e-13)))).toBe(false);
    expect(groupRewardsVary(group(traj(1), traj(1.5)))).toBe(true);
  });

  it("needs a Choice with logprobs, or any assistant turn when training without logprobs is allowed", () => {
    const noLogprobs = { ...sampledChoice("a"), logprobs: null };
    expect(hasTrainableItem(traj(0), false)).toBe(true);
    expect(hasTrainableItem(traj(0, [noLogprobs]), false)).toBe(false);
    expect(hasTrainableItem(traj(0, [noLogprobs]), true)).toBe(true);
    expect(hasTrainableItem(traj(0, [{ role: "assistant", content: "a" }]), false)).toBe(false);
    expect(hasTrainableItem(traj(0, [{ role: "assistant", content: "a" }]), true)).toBe(true);
    const inAdditional = { ...traj(0, []), additional_histories: [{ messages_and_choices: [sampledChoice("b")], tools: null }] } as unknown as Trajectory;
    expect(hasTrainableItem(inAdditional, false)).toBe(true);
  });

  it("skips trajectories whose advantage is exactly zero", () => {
    // Rewards 0, 1, 0.5: mean 0.5, so the third trajectory's advantage is 0.
    const summary = summarizeTrainability([group(traj(0), traj(1), traj(0.5)), group(traj(2), traj(2)), group(traj(7))], false);
    expect(summary).toEqual({ numGroupsSubmitted: 3, numGroupsTrainable: 1, numTrainableTrajectories: 2 });
    expect(summarizeTrainability([group(traj(0, []), traj(1, []))], false).numTrainableTrajectories).toBe(0);
  });
});
