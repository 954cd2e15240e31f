/**
 * Reinforcement learning in the shape of OpenPipe ART's serverless client: register a trainable
 * model, and every step sample groups of rollouts from the current checkpoint, score each with a
 * reward, post the groups as a training job, follow the job's events until the new checkpoint
 * exists, and roll out from that checkpoint next. It prints the mean reward per step, and the
 * greedy accuracy on held-out questions before the first step and after the last.
 *
 *   npx tsx examples/rl.ts
 *
 * The task: sums of three numbers from 20 to 49 ("What is 32 + 27 + 45?"). flywheel/tiny-chat was
 * taught the column work for terms up to 30 only and miscopies larger ones into it (12% right,
 * greedy). The reward is exact: 1 when the reply's content is the sum, else 0. Rollouts are sampled
 * above temperature 1: the model is sure of its wrong copies, and a group whose rollouts all agree
 * gets equal rewards and teaches nothing.
 * Each step asks new questions; the held-out questions are never trained on. Settings (besides
 * those in examples/shared.ts): RL_STEPS (70), RL_GROUPS (questions per step, 8), RL_GROUP_SIZE
 * (rollouts per question, 16), RL_LEARNING_RATE (0.001), RL_TEMPERATURE (the rollouts' sampling
 * temperature, 1.3), RL_EVAL_QUESTIONS (held-out, 100) and
 * RL_SEED (1: which training questions come first and the rollouts' sampling seeds; the same seed
 * gives the same run up to thread timing).
 *
 * The requests are the ones ART sends (`docs/api/training.md#art-client-flow`): the preview training API under
 * `/v1/preview/...`, and chat completions on the model's inference name. Here they go through the
 * OpenAI SDK's generic `post`/`get`, which is also what ART's client is built on.
 */
import type OpenAI from "openai";
import { connect, isMain, run } from "./shared.js";

export interface TrainableModel {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
}

/** A trajectory group as ART serialises it: rollouts of one scenario, each a conversation and a reward. */
export interface TrajectoryGroup {
  trajectories: { messages_and_choices: unknown[]; reward: number; metrics: Record<string, number>; metadata: Record<string, string> }[];
  exceptions: never[];
}

export interface RlSettings {
  steps: number;
  groups: number;
  groupSize: number;
  learningRate: number;
  evalQuestions: number;
  seed: number;
  /** Sampling temperature of the rollouts. */
  temperature: number;
}

export function rlSettings(env: NodeJS.ProcessEnv = process.env, defaults: Partial<RlSettings> = {}): RlSettings {
  const { steps = 70, groups = 8, groupSize = 16, learningRate = 0.001, evalQuestions = 100, seed = 1, temperature = 1.3 } = defaults;
  const number = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${env[name]}'`);
    return value;
  };
  return {
    steps: number("RL_STEPS", steps),
    groups: number("RL_GROUPS", groups),
    groupSize: number("RL_GROUP_SIZE", groupSize),
    learningRate: number("RL_LEARNING_RATE", learningRate),
    evalQuestions: number("RL_EVAL_QUESTIONS", evalQuestions),
    seed: number("RL_SEED", seed),
    temperature: number("RL_TEMPERATURE", temperature),
  };
}

// ---- The task: a scenario, a rollout and its reward -------------------------------------------

export interface Scenario {
  question: string;
  answer: number;
}

/** A small seeded generator (mulberry32), so every run asks the same questions. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The terms' range. flywheel/tiny-chat was taught three-term sums of numbers from 1 to 30 only, and
 * mostly miscopies larger terms into its column work; the first two terms stay below 50 so their
 * sum has two digits, the most its column work was taught to add to.
 */
export const LOWEST_TERM = 20;
export const HIGHEST_TERM = 49;

/**
 * Every question of the task (each ordered triple of terms in the range), shuffled the same way on
 * every run: the first `evalCount` are the held-out set, the rest are asked in training, in order.
 */
export function threeTermScenarios(evalCount: number): { heldOut: Scenario[]; training: Scenario[] } {
  const all: Scenario[] = [];
  const terms = Array.from({ length: HIGHEST_TERM - LOWEST_TERM + 1 }, (_, i) => LOWEST_TERM + i);
  for (const a of terms) for (const b of terms) for (const c of terms) all.push({ question: `What is ${a} + ${b} + ${c}?`, answer: a + b + c });
  const random = seededRandom(2026);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return { heldOut: all.slice(0, evalCount), training: all.slice(evalCount) };
}

/** 1 when the reply's content (its reasoning apart) is exactly the sum, else 0. */
export function reward(scenario: Scenario, content: string | null): number {
  return content?.trim() === String(scenario.answer) ? 1 : 0;
}

/** Room for the column work the model writes as reasoning before the number. */
const MAX_REPLY_TOKENS = 96;

/**
 * One group: `groupSize` answers to one question from the model at `inferenceName`. Sampled at
 * `temperature` from the full distribution (the model's generation_config may narrow top_p/top_k,
 * so they are reset). A fixed seed per question keeps runs comparable. Flywheel returns each
 * choice's logprobs with token ids for trained-model names — what the trainer needs.
 */
export async function rollout(client: OpenAI, inferenceName: string, scenario: Scenario, seed: number, groupSize: number, temperature: number): Promise<TrajectoryGroup> {
  const messages = [{ role: "user" as const, content: scenario.question }];
  const completion = await client.chat.completions.create({
    model: inferenceName,
    messages,
    n: groupSize,
    max_completion_tokens: MAX_REPLY_TOKENS,
    temperature,
    top_p: 1,
    seed,
    // vLLM's extension: top_k 0 turns it off.
    ...{ top_k: 0 },
  });
  return {
    trajectories: completion.choices.map((choice) => ({
      messages_and_choices: [...messages, choice],
      reward: reward(scenario, choice.message.content),
      metrics: {},
      metadata: { question: scenario.question },
    })),
    exceptions: [],
  };
}

export const meanReward = (groups: TrajectoryGroup[]) => {
  const rewards = groups.flatMap((group) => group.trajectories.map((trajectory) => trajectory.reward));
  return rewards.reduce((sum, value) => sum + value, 0) / rewards.length;
};

/** The share of `scenarios` the model at `inferenceName` answers exactly, greedy. */
export async function heldOutAccuracy(client: OpenAI, inferenceName: string, scenarios: Scenario[]): Promise<number> {
  const replies = await Promise.all(
    scenarios.map((scenario) => client.chat.completions.create({ model: inferenceName, messages: [{ role: "user", content: scenario.question }], max_completion_tokens: MAX_REPLY_TOKENS, temperature: 0 })),
  );
  return replies.filter((reply, index) => reward(scenarios[index]!, reply.choices[0]?.message.content ?? null) === 1).length / scenarios.length;
}

// ---- The training API, as ART's serverless backend calls it ------------------------------------

/** `model.register(backend)`: POST /v1/preview/models with return_existing, so a rerun continues the same model. */
export async function registerModel(client: OpenAI, project: string, name: string, baseModel: string): Promise<TrainableModel> {
  return client.post<TrainableModel>("/preview/models", { body: { project, name, base_model: baseModel, return_existing: true } });
}

/** The name chat completions serve a model's checkpoint under (`:step0` is the base model). */
export const inferenceName = (model: TrainableModel, step: number) => `wandb-artifact:///${model.entity}/${model.project}/${model.name}:step${step}`;

/** `model.get_step()`: the newest checkpoint's step, 0 before the first training job. */
export async function currentStep(client: OpenAI, model: TrainableModel): Promise<number> {
  const page = await client.get<{ data: { step: number }[] }>(`/preview/models/${model.id}/checkpoints`, { query: { limit: 1, order: "desc" } });
  return page.data[0]?.step ?? 0;
}

interface JobEvent {
  id: string;
  type: "training_started" | "gradient_step" | "training_ended" | "training_failed";
  data: Record<string, unknown>;
}

export interface TrainResult {
  step: number;
  /** `training_started.num_sequences`: the optimizer steps this job takes. */
  numSequences: number;
  losses: number[];
}

/**
 * `backend.train(model, groups)`: post the job, poll its events once a second (ART's loop) until
 * `training_ended`, then read the new step from the newest checkpoint.
 */
export async function train(client: OpenAI, model: TrainableModel, groups: TrajectoryGroup[], learningRate: number): Promise<TrainResult> {
  const job = await client.post<{ id: string }>("/preview/training-jobs", {
    body: {
      model_id: model.id,
      trajectory_groups: groups,
      // Unset fields take ART's defaults (docs/api/training.md#rl-config). A packed row of 512 tokens
      // holds one group (a question and its rollouts with their reasoning), so a job takes one
      // optimizer step per group.
      experimental_config: { learning_rate: learningRate, packed_sequence_length: 512, logprob_calculation_chunk_size: 512 },
    },
  });
  let after: string | undefined;
  let numSequences = 0;
  const losses: number[] = [];
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const page = await client.get<{ data: JobEvent[]; has_more: boolean }>(`/preview/training-jobs/${job.id}/events`, { query: after ? { after, limit: 100 } : { limit: 100 } });
    for (const event of page.data) {
      after = event.id;
      if (event.type === "training_started") numSequences = Number(event.data.num_sequences);
      if (event.type === "gradient_step") losses.push(Number(event.data.loss));
      if (event.type === "training_failed") throw new Error(`Training job ${job.id} failed: ${String(event.data.error_message)}`);
      if (event.type === "training_ended") return { step: await currentStep(client, model), numSequences, losses };
    }
  }
}

// ---- The loop ----------------------------------------------------------------------------------

export interface StepReport {
  step: number;
  meanReward: number;
}

/** Rolls out every scenario from `inferenceName`, one group each, with one sampling seed per scenario (from the run's seed). */
export async function rolloutAll(client: OpenAI, name: string, scenarios: Scenario[], groupSize: number, runSeed: number, temperature: number): Promise<TrajectoryGroup[]> {
  return Promise.all(scenarios.map((scenario, index) => rollout(client, name, scenario, runSeed * 1000 + index, groupSize, temperature)));
}

async function main(): Promise<void> {
  const started = performance.now();
  const { client, model: baseModel } = await connect();
  const settings = rlSettings();
  const { heldOut, training } = threeTermScenarios(settings.evalQuestions);
  // Each seed starts at its own place in the training questions, so runs with different seeds ask different ones.
  const first = (settings.seed - 1) * settings.steps * settings.groups;
  const questionsAt = (index: number) => Array.from({ length: settings.groups }, (_, i) => training[(first + index * settings.groups + i) % training.length]!);
  // A new name per run, so training starts from the base model; reuse a name to continue training it.
  const model = await registerModel(client, "rl-example", `adder-${Date.now().toString(36)}`, baseModel);
  console.log(`Registered ${model.entity}/${model.project}/${model.name} on ${baseModel} (model id ${model.id})`);
  console.log(`Each step: ${settings.groups} new questions × ${settings.groupSize} rollouts, reward 1 for exactly the sum, else 0.\n`);

  let step = await currentStep(client, model);
  const before = await heldOutAccuracy(client, inferenceName(model, step), heldOut);
  console.log(`held-out accuracy before training: ${percent(before)} of ${heldOut.length} questions (greedy)`);
  const rewards: number[] = [];
  for (let index = 0; index < settings.steps; index++) {
    const groups = await rolloutAll(client, inferenceName(model, step), questionsAt(index), settings.groupSize, settings.seed, settings.temperature);
    rewards.push(meanReward(groups));
    const result = await train(client, model, groups, settings.learningRate);
    // Groups whose rollouts all got the same reward teach nothing; a job with none still advances the step.
    const trained = result.numSequences > 0 ? `${result.numSequences} gradient steps` : "nothing to learn (every group's rewards were equal)";
    console.log(`step ${step}: mean reward ${rewards.at(-1)!.toFixed(3)}; training job: ${trained} → checkpoint step ${result.step}`);
    step = result.step;
  }
  const after = await heldOutAccuracy(client, inferenceName(model, step), heldOut);
  console.log(`\nMean reward per step: ${rewards.map((value) => value.toFixed(3)).join(" → ")}`);
  console.log(`Held-out accuracy: ${percent(before)} → ${percent(after)} (greedy, ${heldOut.length} questions never trained on)`);
  console.log(`Took ${((performance.now() - started) / 1000).toFixed(0)} s. Chat with the trained model as "${inferenceName(model, step)}" (or without ":step${step}" for the latest).`);
}

const percent = (share: number) => `${(100 * share).toFixed(0)}%`;

if (isMain(import.meta.url)) run(main);
