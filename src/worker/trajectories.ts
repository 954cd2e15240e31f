import { rewardsHaveZeroVariance } from "../engine/train/advantages.js";
import { type History, historiesOf, trainableFlags, type TrajectoryExchangesJson, type TrajectoryGroup, type TrajectoryJson } from "../engine/train/trajectory.js";

/**
 * The checks the job runner makes on a job's stored trajectory groups before it calls a trainer: which
 * groups and trajectories could train at all (docs/api/training.md#advantages,
 * docs/api/training.md#rl-tokenization step 1).
 */

/** A group can train only with ≥ 2 trajectories whose rewards are not all equal (within 1e-12). */
export function groupRewardsVary(group: Pick<TrajectoryGroup, "trajectories">): boolean {
  return !rewardsHaveZeroVariance(group.trajectories.map((trajectory) => trajectory.reward));
}

/**
 * Whether a trajectory has an item the trainer could learn from (docs/api/training.md#rl-tokenization step
 * 1): a Choice with logprobs, or with `allowWithoutLogprobs` any Choice or assistant message (of an exchange,
 * only its response's Choice).
 */
export function hasTrainableItem(trajectory: History & { additional_histories?: History[]; exchanges?: TrajectoryExchangesJson }, allowWithoutLogprobs: boolean): boolean {
  return historiesOf(trajectory as TrajectoryJson, []).some(({ history }) => trainableFlags(history, history.messages_and_choices, allowWithoutLogprobs).includes(true));
}

export interface TrainabilitySummary {
  numGroupsSubmitted: number;
  /** Groups whose rewards vary (docs/api/training.md#advantages). */
  numGroupsTrainable: number;
  /** Trajectories with a non-zero advantage and something to train on. */
  numTrainableTrajectories: number;
}

/** What of a job's groups could train; nothing (0 trajectories) means the step advances unchanged. */
export function summarizeTrainability(groups: TrajectoryGroup[], allowWithoutLogprobs: boolean): TrainabilitySummary {
  let numGroupsTrainable = 0;
  let numTrainableTrajectories = 0;
  for (const group of groups) {
    if (!groupRewardsVary(group)) continue;
    numGroupsTrainable++;
    const mean = group.trajectories.reduce((sum, trajectory) => sum + trajectory.reward, 0) / group.trajectories.length;
    for (const trajectory of group.trajectories) {
      // Trajectories whose advantage is exactly zero are skipped by the trainer (docs/api/training.md#advantages).
      if (trajectory.reward - mean !== 0 && hasTrainableItem(trajectory, allowWithoutLogprobs)) numTrainableTrajectories++;
    }
  }
  return { numGroupsSubmitted: groups.length, numGroupsTrainable, numTrainableTrajectories };
}
