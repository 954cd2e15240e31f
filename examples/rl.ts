/**
 * Reinforcement learning in the shape of OpenPipe ART's serverless client: register a trainable
 * model, and every step sample groups of rollouts from the current checkpoint, score each with a
 * reward, post the groups as a training job, follow the job's events until the new checkpoint
 * exists, and roll out from that checkpoint next. It prints the mean reward per step.
 *
 *   npx tsx examples/rl.ts
 *
 * The task: short addition questions, reward 1 when the reply's first number is the sum (less for
 * a close number, see `reward`). Every step asks the same questions with the same seeds, so the reward changes only because the model
 * does. Settings (besides those in examples/shared.ts): RL_STEPS (12), RL_GROUPS (questions per
 * step, 8), RL_GROUP_SIZE (rollouts per question, 8), RL_LEARNING_RATE (0.001; higher rates make
 * flywheel/tiny-chat's LoRA overshoot and its replies collapse).
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
}

export function rlSettings(env: NodeJS.ProcessEnv = process.env, defaults: Partial<RlSettings> = {}): RlSettings {
  const { steps = 12, groups = 8, groupSize = 8, learningRate = 0.001 } = defaults;
  const number = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${env[name]}'`);
    return value;
  };
  return { steps: number("RL_STEPS", steps), groups: number("RL_GROUPS", groups), groupSize: number("RL_GROUP_SIZE", groupSize), learningRate: number("RL_LEARNING_RATE", learningRate) };
}

// ---- The task: a scenario, a rollout and its reward -------------------------------------------

export interface Scenario {
  question: string;
  answer: number;
}

/** `count` addition questions, the same on every run. */
export function additionScenarios(count: number): Scenario[] {
  return Array.from({ length: count }, (_, index) => {
    const a = 11 + ((index * 37) % 80);
    const b = 3 + ((index * 53) % 60);
    return { question: `What is ${a} + ${b}?`, answer: a + b };
  });
}

/**
 * 1 when the reply's first number is the sum. Less for another number: 0.1 for answering with a
 * number at all, plus up to 0.4 the closer it is. The partial credit gives a model that cannot add
 * yet something to learn from; 0 without a number.
 */
export function reward(scenario: Scenario, reply: string | null): number {
  const first = /-?\d+(?:\.\d+)?/.exec(reply ?? "");
  if (first === null) return 0;
  const value = Number(first[0]);
  if (value === scenario.answer) return 1;
  return 0.1 + 0.4 * Math.max(0, 1 - Math.abs(value - scenario.answer) / scenario.answer);
}

/**
 * One group: `groupSize` answers to one question from the model at `inferenceName`. Sampled at
 * temperature 1 from the full distribution (the model's generation_config may narrow top_p/top_k,
 * so they are reset). A fixed seed per question keeps runs comparable. Flywheel returns each
 * choice's logprobs with token ids for trained-model names — what the trainer needs.
 */
export async function rollout(client: OpenAI, inferenceName: string, scenario: Scenario, seed: number, groupSize: number): Promise<TrajectoryGroup> {
  const messages = [{ role: "user" as const, content: scenario.question }];
  const completion = await client.chat.completions.create({
    model: inferenceName,
    messages,
    n: groupSize,
    max_completion_tokens: 8,
    temperature: 1,
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
      // Unset fields take ART's defaults (docs/api/training.md#rl-config). Short packed rows mean several
      // optimizer steps per job for these short conversations; a high rate suits a small model.
      experimental_config: { learning_rate: learningRate, packed_sequence_length: 64, logprob_calculation_chunk_size: 64 },
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

/** Rolls out every scenario from `inferenceName`, one group each, with one seed per scenario. */
export async function rolloutAll(client: OpenAI, name: string, scenarios: Scenario[], groupSize: number): Promise<TrajectoryGroup[]> {
  return Promise.all(scenarios.map((scenario, index) => rollout(client, name, scenario, 1000 + index, groupSize)));
}

async function main(): Promise<void> {
  const { client, model: baseModel } = await connect();
  const settings = rlSettings();
  const scenarios = additionScenarios(settings.groups);
  // A new name per run, so the reward starts from the base model; reuse a name to continue training it.
  const model = await registerModel(client, "rl-example", `adder-${Date.now().toString(36)}`, baseModel);
  console.log(`Registered ${model.entity}/${model.project}/${model.name} on ${baseModel} (model id ${model.id})`);
  console.log(`Each step: ${scenarios.length} questions × ${settings.groupSize} rollouts, reward 1 for the right sum, 0.1–0.5 for another number.\n`);

  const rewards: number[] = [];
  let step = await currentStep(client, model);
  let groups = await rolloutAll(client, inferenceName(model, step), scenarios, settings.groupSize);
  for (let index = 0; index < settings.steps; index++) {
    rewards.push(meanReward(groups));
    console.log(`step ${step}: mean reward ${rewards.at(-1)!.toFixed(3)}`);
    const result = await train(client, model, groups, settings.learningRate);
    // Groups whose rollouts all got the same reward teach nothing; a job with none still advances the step.
    const trained = result.numSequences > 0 ? `${result.numSequences} gradient steps` : "nothing to learn (every group's rewards were equal)";
    console.log(`  training job: ${trained} → checkpoint step ${result.step}`);
    step = result.step;
    groups = await rolloutAll(client, inferenceName(model, step), scenarios, settings.groupSize);
  }
  rewards.push(meanReward(groups));
  console.log(`step ${step}: mean reward ${rewards.at(-1)!.toFixed(3)}`);
  console.log(`\nMean reward per step: ${rewards.map((value) => value.toFixed(3)).join(" → ")}`);
  console.log(`Chat with the trained model as "${inferenceName(model, step)}" (or without ":step${step}" for the latest).`);
}

if (isMain(import.meta.url)) run(main);
