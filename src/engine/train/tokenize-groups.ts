import { groupAdvantages, rewardsHaveZeroVariance } from "./advantages.js";
import type { ChatTemplateDeps } from "./chat-render.js";
import { TrainingInputError, type Loc } from "./errors.js";
import { type TokenizedHistory, tokenizeHistory, type TurnSpan } from "./tokenize-history.js";
import { hasExchanges, historiesOf, type TrajectoryGroupJson } from "./trajectory.js";

/**
 * From trajectory groups to tokenized results (`docs/api/training.md#advantages`,
 * `docs/api/training.md#packing`, `docs/api/training.md#rl-tokenization` step 7): advantages per group, one
 * result per history of each trajectory with a non-zero advantage, the trajectory's token weight, and the
 * group's shared prompt (its id and length) for prefix sharing in packing.
 */
export interface TokenizedResult {
  tokenIds: number[];
  logprobs: number[];
  assistantMask: number[];
  /** Position of each token within its own sequence. */
  inputPos: number[];
  advantage: number;
  /** 1 / (trainable tokens over all the trajectory's histories + 1e-6). */
  weight: number;
  /** Identifies the group's shared prompt (1, 2, … in group order). */
  promptId: number;
  /** Leading tokens shared by every result of the group (never a trainable token). */
  promptLength: number;
  groupIndex: number;
  trajectoryIndex: number;
  /** Which history of the trajectory (0: its own messages_and_choices; exchanges count from 0 too). */
  historyIndex?: number;
  /** The trajectory's histories are its exchanges, not messages_and_choices. */
  fromExchanges?: boolean;
  /** Where the trainable turns' tokens are (see `TokenizedHistory`). */
  turns?: TurnSpan[];
}

export interface TokenizeGroupsOptions {
  scaleRewards: boolean;
  allowTrainingWithoutLogprobs: boolean;
  /** Uniform [0, 1) source for the in-group shuffle; tests pass a seeded one. */
  random?: () => number;
}

export interface TokenizedGroups {
  results: TokenizedResult[];
  numGroupsSubmitted: number;
  /** Groups whose rewards are not all equal (`rewardsHaveZeroVariance`). */
  numGroupsTrainable: number;
  /** Trajectories plus exceptions, over all groups. */
  numTrajectories: number;
}

export function tokenizeTrajectoryGroups(groups: readonly TrajectoryGroupJson[], deps: ChatTemplateDeps, options: TokenizeGroupsOptions): TokenizedGroups {
  const random = options.random ?? Math.random;
  const results: TokenizedResult[] = [];
  let numGroupsTrainable = 0;
  let numTrajectories = 0;
  let nextPromptId = 1;
  groups.forEach((group, groupIndex) => {
    const groupLoc: Loc = ["trajectory_groups", groupIndex];
    const trajectories = group.trajectories;
    if (!Array.isArray(trajectories)) throw new TrainingInputError([...groupLoc, "trajectories"], "must be a list of trajectories");
    numTrajectories += trajectories.length + (Array.isArray(group.exceptions) ? group.exceptions.length : 0);
    const rewards = trajectories.map((trajectory, index) => rewardOf(trajectory, [...groupLoc, "trajectories", index]));
    // Equal rewards can leave float residue in (reward - mean); such groups are skipped outright.
    if (rewardsHaveZeroVariance(rewards)) return;
    numGroupsTrainable++;
    const advantages = groupAdvantages(rewards, options.scaleRewards);
    const groupResults: TokenizedResult[] = [];
    trajectories.forEach((trajectory, trajectoryIndex) => {
      const advantage = advantages[trajectoryIndex]!;
      if (advantage === 0) return;
      const trajectoryLoc = [...groupLoc, "trajectories", trajectoryIndex];
      const fromExchanges = hasExchanges(trajectory);
      const own = historiesOf(trajectory, trajectoryLoc)
        .map(({ history, loc }, historyIndex) => ({ tokenized: tokenizeHistory(history, deps, options.allowTrainingWithoutLogprobs, loc), historyIndex }))
        .filter((entry): entry is { tokenized: TokenizedHistory; historyIndex: number } => entry.tokenized !== null);
      const trainableTokens = own.reduce((sum, { tokenized }) => sum + tokenized.assistantMask.reduce((a, b) => a + b, 0), 0);
      const weight = 1 / (trainableTokens + 1e-6);
      for (const { tokenized, historyIndex } of own) {
        groupResults.push({ ...tokenized, inputPos: tokenized.tokenIds.map((_, i) => i), advantage, weight, promptId: 0, promptLength: 0, groupIndex, trajectoryIndex, historyIndex, fromExchanges });
      }
    });
    if (groupResults.length === 0) return;
    const promptId = nextPromptId++;
    const promptLength = sharedPromptLength(groupResults);
    for (const result of groupResults) {
      result.promptId = promptId;
      result.promptLength = promptLength;
    }
    shuffleInPlace(groupResults, random);
    results.push(...groupResults);
  });
  return { results, numGroupsSubmitted: groups.length, numGroupsTrainable, numTrajectories };
}

function rewardOf(trajectory: unknown, loc: Loc): number {
  if (typeof trajectory !== "object" || trajectory === null) throw new TrainingInputError(loc, "a trajectory must be an object");
  const reward = (trajectory as { reward?: unknown }).reward ?? 0;
  if (typeof reward !== "number" || !Number.isFinite(reward)) throw new TrainingInputError([...loc, "reward"], "reward must be a finite number");
  return reward;
}

/**
 * The longest common token prefix of the group's results, cut one token before the first trainable
 * token: the last shared token stays in each result so that, when packed after another result, its
 * first trained token is still predicted from its own context.
 */
export function sharedPromptLength(results: readonly Pick<TokenizedResult, "tokenIds" | "logprobs" | "assistantMask">[]): number {
  if (results.length === 0) return 0;
  let common = Math.min(...results.map((result) => result.tokenIds.length));
  for (let i = 0; i < common; i++) {
    const id = results[0]!.tokenIds[i];
    if (results.some((result) => result.tokenIds[i] !== id)) {
      common = i;
      break;
    }
  }
  const firstTrainable = Math.min(
    ...results.map((result) => {
      const index = result.tokenIds.findIndex((_, i) => result.assistantMask[i] === 1 || !Number.isNaN(result.logprobs[i]));
      return index < 0 ? result.tokenIds.length : index;
    }),
  );
  return Math.max(Math.min(common, firstTrainable) - 1, 0);
}

export function shuffleInPlace<T>(items: T[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}
