/**
 * Tracing with the W&B Weave SDK into Flywheel: the RL loop of examples/rl.ts, with each step, each
 * group of rollouts, each chat completion and each training job recorded as calls of one trace in
 * Flywheel's Weave-compatible trace API. At the end it reads the trace back and prints what was
 * recorded.
 *
 *   npx tsx examples/trace.ts
 *
 * The Weave SDK finds the server through WF_TRACE_SERVER_URL (set here from FLYWHEEL_BASE_URL and
 * the server's trace path when unset) and takes the same API key as WANDB_API_KEY. Settings:
 * examples/shared.ts and examples/rl.ts (RL_STEPS defaults to 3 here, RL_GROUP_SIZE to 8).
 */
import type OpenAI from "openai";
import { currentStep, inferenceName, meanReward, registerModel, rlSettings, rollout, type Scenario, threeTermScenarios, train, type TrainableModel } from "./rl.js";
import { connect, run } from "./shared.js";

interface StoredCall {
  id: string;
  op_name: string;
  parent_id: string | null;
  output: Record<string, unknown> | null;
  summary?: { usage?: Record<string, { requests: number; total_tokens: number }>; weave?: { status?: string; latency_ms?: number } };
}

const opOf = (call: StoredCall) => call.op_name.replace(/^weave:\/\/\/[^/]+\/[^/]+\/op\//, "").replace(/:.*$/, "");

async function main(): Promise<void> {
  const { client, model: baseModel, baseUrl, apiKey, server } = await connect();
  const settings = rlSettings(process.env, { steps: 3, groupSize: 8 });
  const traceUrl = `${baseUrl}${server.trace_base_path}`;
  process.env.WF_TRACE_SERVER_URL ??= traceUrl;
  process.env.WANDB_API_KEY ??= apiKey;
  // Imported after the environment is set: the SDK reads it when it initialises.
  const weave = await import("weave");

  const model = await registerModel(client, "rl-example", `traced-${Date.now().toString(36)}`, baseModel);
  const project = `${model.entity}/rl-example`;
  // printCallLink off: the SDK would print links to W&B's hosted UI, which has none of these calls.
  const weaveClient = await weave.init(project, { printCallLink: false });
  // Every chat completion through this client becomes a call (inputs, output, token usage).
  // (weave 0.11's types describe the openai v4 client; the wrapper works with v6 all the same.)
  const traced = weave.wrapOpenAI(client as unknown as Parameters<typeof weave.wrapOpenAI>[0]) as unknown as OpenAI;
  const scenarios = threeTermScenarios(0).training.slice(0, settings.groups);

  const rolloutGroup = weave.op(
    async function rolloutGroup(question: string, modelName: string, seed: number) {
      const scenario = scenarios.find((candidate) => candidate.question === question) as Scenario;
      const group = await rollout(traced, modelName, scenario, seed, settings.groupSize, settings.temperature);
      return { group, rewards: group.trajectories.map((trajectory) => trajectory.reward) };
    },
    { name: "rollout_group" },
  );
  const trainStep = weave.op(
    async function trainStep(trainable: TrainableModel, groups: unknown[]) {
      const result = await train(client, trainable, groups as Parameters<typeof train>[2], settings.learningRate);
      return { new_step: result.step, gradient_steps: result.numSequences, mean_loss: result.losses.reduce((sum, loss) => sum + loss, 0) / Math.max(1, result.losses.length) };
    },
    { name: "train_step" },
  );
  const rlStep = weave.op(
    async function rlStep(step: number) {
      const results = await Promise.all(scenarios.map((scenario, index) => rolloutGroup(scenario.question, inferenceName(model, step), 1000 + index)));
      const groups = results.map((result) => result.group);
      const reward = meanReward(groups);
      const trained = await trainStep(model, groups);
      return { step, mean_reward: reward, ...trained };
    },
    { name: "rl_step" },
  );
  let traceId = "";
  let rootId = "";
  const rlLoop = weave.op(
    async function rlLoop(steps: number) {
      ({ traceId, callId: rootId } = weave.requireCurrentCallStackEntry());
      const rewards: number[] = [];
      let step = await currentStep(client, model);
      for (let index = 0; index < steps; index++) {
        const result = await rlStep(step);
        rewards.push(result.mean_reward);
        console.log(`step ${step}: mean reward ${result.mean_reward.toFixed(3)}, trained → step ${result.new_step}`);
        step = result.new_step;
      }
      return { rewards, final_step: step };
    },
    { name: "rl_loop" },
  );

  console.log(`Tracing into ${process.env.WF_TRACE_SERVER_URL} as project ${project}\n`);
  await rlLoop(settings.steps);
  // The SDK sends calls in batches in the background; wait until all have arrived.
  await weaveClient.waitForBatchProcessing();

  const response = await fetch(`${traceUrl}/calls/stream_query`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ project_id: project, filter: { trace_ids: [traceId] }, sort_by: [{ field: "started_at", direction: "asc" }] }),
  });
  if (!response.ok) throw new Error(`reading the trace back failed: HTTP ${response.status} ${await response.text()}`);
  const calls = (await response.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StoredCall);
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(opOf(call), (counts.get(opOf(call)) ?? 0) + 1);
  const root = calls.find((call) => call.id === rootId);
  console.log(`\nTrace ${traceId}: ${calls.length} calls, root rl_loop ${rootId} (${root?.summary?.weave?.status ?? "not found"}, ${root?.summary?.weave?.latency_ms ?? "?"} ms)`);
  for (const [op, count] of counts) console.log(`  ${String(count).padStart(4)} × ${op}`);
  console.log("The rl_step calls' outputs, as stored:");
  for (const call of calls.filter((candidate) => opOf(candidate) === "rl_step")) {
    const output = call.output as { step: number; mean_reward: number; new_step: number; gradient_steps: number };
    console.log(`  step ${output.step}: mean_reward ${output.mean_reward.toFixed(3)}, ${output.gradient_steps} gradient steps → step ${output.new_step}`);
  }
  const usage = Object.values(root?.summary?.usage ?? {});
  console.log(`Token usage summed over the trace: ${usage.reduce((sum, entry) => sum + entry.requests, 0)} requests, ${usage.reduce((sum, entry) => sum + entry.total_tokens, 0)} tokens`);
  console.log(`\nRead it back with:\n  curl -s ${traceUrl}/calls/stream_query -u "api:$FLYWHEEL_API_KEY" -H 'content-type: application/json' \\`);
  console.log(`    -d '{"project_id": "${project}", "filter": {"trace_ids": ["${traceId}"]}}'`);
}

run(main);
