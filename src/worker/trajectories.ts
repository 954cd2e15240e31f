/**
 * Trajectory groups as a job stores them (spec/training.md §4), and the checks the job runner makes
 * before it calls a trainer: which groups and trajectories could train at all (§5.2, §6 step 1).
 */

/** A plain chat message (OpenAI format): any keys, `role` always present. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** A sampled completion choice as the OpenAI SDK dumps it; only these are trained on by default. */
export interface ChoiceItem {
  message: { role?: string; content?: string | null; tool_calls?: unknown[] | null; [key: string]: unknown };
  logprobs?: { content?: unknown[] | null; refusal?: unknown[] | null; [key: string]: unknown } | null;
  finish_reason?: string | null;
  index?: number;
  [key: string]: unknown;
}

export type TrajectoryItem = ChatMessage | ChoiceItem;

export interface History {
  messages_and_choices: TrajectoryItem[];
  tools: unknown[] | null;
}

export interface Trajectory extends History {
  additional_histories: History[];
  reward: number;
  metrics: Record<string, number | boolean>;
  metadata: Record<string, unknown>;
  logs: string[];
  [key: string]: unknown;
}

export interface TrajectoryGroup {
  trajectories: Trajectory[];
  exceptions: unknown[];
  metadata: Record<string, unknown>;
  metrics: Record<string, number | boolean>;
  logs: string[];
  [key: string]: unknown;
}

/** The §4.2 discriminator: a Choice is an object with a `message` object and no top-level `role`. */
export function isChoice(item: unknown): item is ChoiceItem {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return false;
  const record = item as Record<string, unknown>;
  return !("role" in record) && typeof record.message === "object" && record.message !== null && !Array.isArray(record.message);
}

/** Rewards that differ by at most this much count as equal (ART's `rewards_have_zero_variance`). */
const EQUAL_REWARD_TOLERANCE = 1e-12;

/** A group can train only with ≥ 2 trajectories whose rewards are not all equal. */
export function groupRewardsVary(group: Pick<TrajectoryGroup, "trajectories">): boolean {
  const rewards = group.trajectories.map((trajectory) => trajectory.reward);
  if (rewards.length < 2) return false;
  return Math.max(...rewards) - Math.min(...rewards) > EQUAL_REWARD_TOLERANCE;
}

/**
 * Whether a trajectory has an item the trainer could learn from (§6 step 1): a Choice with
 * logprobs, or with `allowWithoutLogprobs` any Choice or assistant message.
 */
export function hasTrainableItem(trajectory: History & { additional_histories?: History[] }, allowWithoutLogprobs: boolean): boolean {
  const histories = [trajectory, ...(trajectory.additional_histories ?? [])];
  return histories.some((history) =>
    history.messages_and_choices.some((item) => {
      if (isChoice(item)) return allowWithoutLogprobs || (item.logprobs !== null && item.logprobs !== undefined);
      return allowWithoutLogprobs && item.role === "assistant";
    }),
  );
}

export interface TrainabilitySummary {
  numGroupsSubmitted: number;
  /** Groups whose rewards vary (§5.2). */
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
      // Trajectories whose advantage is exactly zero are skipped by the trainer (§5.2).
      if (trajectory.reward - mean !== 0 && hasTrainableItem(trajectory, allowWithoutLogprobs)) numTrainableTrajectories++;
    }
  }
  return { numGroupsSubmitted: groups.length, numGroupsTrainable, numTrainableTrajectories };
}
