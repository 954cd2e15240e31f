import { describe, expect, it } from "vitest";
import { loadModelFiles } from "../../engine/model/load.js";
import { resolveRlConfig } from "../../engine/train/config.js";
import { resolveSftConfig } from "../../engine/train/sft-config.js";
import { tinyModel } from "../../testing/models.js";
import { longConversationGroups, sampledChoice } from "../../testing/training.js";
import { decodeJobWork, type StoredJobWork } from "../../worker/job-input.js";
import { planJob, type JobPlanContext } from "./job-plan.js";
import { JobPlanError, planJobInThread } from "./job-plan-in-thread.js";
import { ThreadSlots } from "./thread-slots.js";

/** The plan a thread answers is, byte for byte, the JSON of the same plan made on this thread. */
const context: JobPlanContext = { jobId: "job-1", baseModel: "tiny/qwen2", baseStep: 3, klReference: null, rewardStdDevHistory: [] };
const rlWork = (groups: unknown[], config: Record<string, unknown> = {}): StoredJobWork => ({ kind: "rl", input: JSON.stringify({ trajectory_groups: groups }), config: JSON.stringify(resolveRlConfig(config)) });
const inLoop = (work: StoredJobWork) => JSON.stringify(planJob(loadModelFiles(tinyModel("qwen2").dir), decodeJobWork(work), context));
const inThread = async (work: StoredJobWork, memoryMb = 1024, slots = new ThreadSlots(1)) => (await planJobInThread({ modelDir: tinyModel("qwen2").dir, work, context }, { memoryMb, slots })).toString("utf8");

describe("planJobInThread", () => {
  it("answers an RL job's plan exactly as planning it on the event loop would", async () => {
    const work = rlWork(longConversationGroups(12, 3), { learning_rate: 2e-5, num_trajectories_learning_rate_multiplier_power: 0.5 });
    const json = await inThread(work);
    expect(json).toBe(inLoop(work));
    expect(JSON.parse(json).rl.steps.length).toBeGreaterThan(0);
  });

  it("answers an SFT job's plan exactly as planning it on the event loop would", async () => {
    const rows = Array.from({ length: 7 }, (_, i) =>
      JSON.stringify({
        messages: [
          { role: "user", content: `ping ${i}` },
          { role: "assistant", content: `pong ${i}` },
        ],
      }),
    );
    const work: StoredJobWork = { kind: "sft", config: JSON.stringify(resolveSftConfig({ batch_size: 3 }, rows.length)), data: { text: `${rows.join("\n")}\n`, fileName: "train.jsonl", metadataText: null } };
    const json = await inThread(work);
    expect(json).toBe(inLoop(work));
    expect(JSON.parse(json).sft.steps).toHaveLength(3);
  });

  it("rejects bad data with the planner's message", async () => {
    const outside = { messages_and_choices: [{ role: "user", content: "hi" }, sampledChoice("x", [999_999])], reward: 0 };
    await expect(inThread(rlWork([{ trajectories: [outside, { ...outside, reward: 1 }], exceptions: [] }]))).rejects.toThrow(/outside the model's vocabulary/);
    await expect(inThread({ kind: "sft", config: "{}", data: { text: "not json\n", fileName: "train.jsonl", metadataText: null } })).rejects.toThrow(JobPlanError);
  });

  it("stops a plan that needs more heap than allowed, and plans a small job within the same limit", async () => {
    expect(JSON.parse(await inThread(rlWork(longConversationGroups(8, 2)), 64)).rl.steps.length).toBeGreaterThan(0);
    await expect(inThread(rlWork(longConversationGroups(4000, 8)), 64)).rejects.toThrow(/needed more than this server's 64 MiB \(FLYWHEEL_JOB_PLAN_MEMORY_MB\)/);
  }, 120_000);

  it("runs no more plans at once than its slots allow; the others wait and then answer the same", async () => {
    const slots = new ThreadSlots(1);
    const works = [4, 5, 6].map((n) => rlWork(longConversationGroups(n, 2)));
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, slots.active)), 1);
    const plans = works.map((work) => inThread(work, 1024, slots));
    expect([slots.active, slots.queued]).toEqual([1, 2]);
    const answers = await Promise.all(plans);
    clearInterval(sample);
    expect(answers).toEqual(works.map(inLoop));
    expect([peak, slots.active, slots.queued]).toEqual([1, 0, 0]);
  }, 60_000);
});
