import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { chatmlTemplate } from "../../testing/chatml.js";
import { groupAdvantages, populationStdDev, rewardsHaveZeroVariance } from "./advantages.js";
import type { ChatTemplateDeps } from "./chat-render.js";
import { sharedPromptLength, tokenizeTrajectoryGroups } from "./tokenize-groups.js";
import type { ChoiceJson, TrajectoryGroupJson, TrajectoryJson } from "./trajectory.js";

const tokenizer = new ByteTokenizer();
const template = chatmlTemplate();
const deps: ChatTemplateDeps = { tokenizer, render: template.render, chatTemplate: template.source };
const bytesOf = (text: string) => [...new TextEncoder().encode(text)];

function choice(text: string): ChoiceJson {
  return { message: { role: "assistant", content: text }, logprobs: { content: bytesOf(text).map((id) => ({ token: `token_id:${id}`, logprob: -0.25 })) } };
}

function trajectory(reward: number, answer: string, extra: Partial<TrajectoryJson> = {}): TrajectoryJson {
  return { reward, messages_and_choices: [{ role: "user", content: "Q?" }, choice(answer)], ...extra };
}

describe("groupAdvantages", () => {
  it("centres rewards on the group mean and scales by the population std + 1e-6", () => {
    // scripts/reference/train_math.py: numpy (r - mean) / (std + 1e-6), and r - mean.
    const scaled = groupAdvantages([1.0, 0.0, 0.5, 0.25], true);
    [1.5212735442367427, -1.1832127566285777, 0.16903039380408252, -0.5070911814122475].forEach((value, i) => expect(scaled[i]).toBeCloseTo(value, 12));
    expect(groupAdvantages([1.0, 0.0, 0.5, 0.25], false)).toEqual([0.5625, -0.4375, 0.0625, -0.1875]);
    expect(groupAdvantages([], true)).toEqual([]);
  });

  it("calls a group untrainable with at most one trajectory or rewards equal within 1e-12", () => {
    expect(rewardsHaveZeroVariance([])).toBe(true);
    expect(rewardsHaveZeroVariance([3])).toBe(true);
    expect(rewardsHaveZeroVariance([0.1, 0.1 + 1e-13, 0.1])).toBe(true);
    expect(rewardsHaveZeroVariance([0.1, 0.1 + 1e-9])).toBe(false);
    expect(populationStdDev([1, 3])).toBe(1);
  });
});

describe("sharedPromptLength", () => {
  it("is the common prefix, cut one token before the first trainable token", () => {
    const result = (tokenIds: number[], firstTrainable: number) => ({
      tokenIds,
      logprobs: tokenIds.map((_, i) => (i >= firstTrainable ? -1 : NaN)),
      assistantMask: tokenIds.map((_, i) => (i >= firstTrainable ? 1 : 0)),
    });
    // Common prefix 4 ([1,2,3,4]); the first trainable token is at 3 in the second result → 3 - 1.
    expect(sharedPromptLength([result([1, 2, 3, 4, 5], 4), result([1, 2, 3, 4, 6], 3)])).toBe(2);
    // Common prefix 2 → 2 - 1.
    expect(sharedPromptLength([result([1, 2, 3, 9], 3), result([1, 2, 4, 9], 3)])).toBe(1);
    expect(sharedPromptLength([result([7, 8], 1), result([9, 8], 1)])).toBe(0);
    // A trainable token without a logprob (allow_training_without_logprobs) also bounds the prompt.
    expect(sharedPromptLength([{ tokenIds: [1, 2, 3], logprobs: [NaN, NaN, NaN], assistantMask: [0, 0, 1] }])).toBe(1);
  });
});

describe("tokenizeTrajectoryGroups", () => {
  it("keeps trajectories with a non-zero advantage, weighs them by their trainable tokens and shares the group prompt", () => {
    const groups: TrajectoryGroupJson[] = [
      { trajectories: [trajectory(1, "yes"), trajectory(0, "no"), trajectory(0.5, "maybe")], exceptions: [{ type: "E", message: "m", traceback: "" }] },
      { trajectories: [trajectory(1, "a"), trajectory(1, "b")] },
      { trajectories: [trajectory(2, "x", { additional_histories: [{ messages_and_choices: [{ role: "user", content: "Other" }, choice("zz")] }] }), trajectory(0, "y")] },
      { trajectories: [trajectory(5, "solo")] },
    ];
    const { results, numGroupsSubmitted, numGroupsTrainable, numTrajectories } = tokenizeTrajectoryGroups(groups, deps, { scaleRewards: true, allowTrainingWithoutLogprobs: false, random: () => 0.999 });
    expect({ numGroupsSubmitted, numGroupsTrainable, numTrajectories }).toEqual({ numGroupsSubmitted: 4, numGroupsTrainable: 2, numTrajectories: 9 });
    // Group 0: the 0.5 reward is the mean (advantage exactly 0) and is skipped; group 1 and 3 have no variance.
    expect(results.map((r) => [r.groupIndex, r.trajectoryIndex])).toEqual([
      [0, 0],
      [0, 1],
      [2, 0],
      [2, 0],
      [2, 1],
    ]);
    const [yes, no, x, xExtra, y] = results;
    // rewards 1, 0, 0.5: mean 0.5, std sqrt(1/6).
    expect(yes!.advantage).toBeCloseTo(0.5 / (Math.sqrt(1 / 6) + 1e-6), 12);
    expect(no!.advantage).toBeCloseTo(-0.5 / (Math.sqrt(1 / 6) + 1e-6), 12);
    // "yes" has three sampled tokens; "x" (1 token) and its additional history "zz" (2) share one weight.
    expect(yes!.weight).toBeCloseTo(1 / (3 + 1e-6), 12);
    expect(x!.weight).toBe(xExtra!.weight);
    expect(x!.weight).toBeCloseTo(1 / (3 + 1e-6), 12);
    expect(xExtra!.advantage).toBe(x!.advantage);
    expect([yes!.promptId, no!.promptId, x!.promptId, y!.promptId]).toEqual([1, 1, 2, 2]);
    // "yes"/"no" share "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n" (12 tokens): 11 shared.
    const prompt = tokenizer.encode("<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n");
    expect(yes!.promptLength).toBe(prompt.length - 1);
    expect(yes!.tokenIds).toEqual([...prompt, ...bytesOf("yes")]);
    expect(yes!.inputPos).toEqual(yes!.tokenIds.map((_, i) => i));
    // Group 2's additional history starts with a different user turn: only "<|im_start|>user\n" is common.
    expect(x!.promptLength).toBe(tokenizer.encode("<|im_start|>user\n").length - 1);
  });

  it("shuffles each group's results with the given random source", () => {
    const groups: TrajectoryGroupJson[] = [{ trajectories: [trajectory(1, "a"), trajectory(0, "b"), trajectory(3, "c")] }];
    const order = (random: () => number) => tokenizeTrajectoryGroups(groups, deps, { scaleRewards: false, allowTrainingWithoutLogprobs: false, random }).results.map((r) => r.trajectoryIndex);
    expect(order(() => 0.999)).toEqual([0, 1, 2]);
    expect(order(() => 0)).toEqual([1, 2, 0]);
  });

  it("rejects a non-numeric reward and a non-list of trajectories, naming where", () => {
    expect(() => tokenizeTrajectoryGroups([{ trajectories: [trajectory(1, "a"), { ...trajectory(0, "b"), reward: "high" as never }] }], deps, { scaleRewards: true, allowTrainingWithoutLogprobs: false })).toThrow(
      /trajectory_groups\.0\.trajectories\.1\.reward/,
    );
    expect(() => tokenizeTrajectoryGroups([{ trajectories: null as never }], deps, { scaleRewards: true, allowTrainingWithoutLogprobs: false })).toThrow(/trajectory_groups\.0\.trajectories/);
  });

  it("treats a missing reward as 0", () => {
    const { results } = tokenizeTrajectoryGroups([{ trajectories: [{ messages_and_choices: [{ role: "user", content: "Q" }, choice("a")] }, trajectory(2, "b")] }], deps, {
      scaleRewards: false,
      allowTrainingWithoutLogprobs: false,
    });
    expect(results.map((r) => r.advantage).sort()).toEqual([-1, 1]);
  });
});
