import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { resolveRlConfig } from "../engine/train/config.js";
import { resolveSftConfig } from "../engine/train/sft-config.js";
import { longConversationGroups } from "../testing/training.js";
import { decodeJobWork, type StoredJobWork } from "./job-input.js";
import { decodeJobWorkInThread, openRunWork } from "./job-work-in-thread.js";
import { summarizeTrainability } from "./trajectories.js";

const rlWork = (groups: unknown[]): StoredJobWork => ({ kind: "rl", input: JSON.stringify({ trajectory_groups: groups }), config: JSON.stringify(resolveRlConfig({ learning_rate: 2e-5 })) });
const sftRows = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: "user", content: `ping ${i}` },
        { role: "assistant", content: `pong ${i}` },
      ],
    }),
  );
const sftWork = (rows: string[], metadataText: string | null = null): StoredJobWork => ({
  kind: "sft",
  config: JSON.stringify(resolveSftConfig({ batch_size: 2 }, rows.length)),
  data: { text: `${rows.join("\n")}\n`, fileName: "train.jsonl", metadataText },
});

/** A full collection now, so the garbage of building a test's input is not collected during the measurement. */
function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

/** The longest the event loop went without running a 2 ms interval while `work` ran. */
async function longestLoopStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(longest, performance.now() - last);
}

describe("decodeJobWorkInThread", () => {
  it("describes an RL job as decoding it on the event loop would, its data encoded for the trainer", async () => {
    const stored = rlWork(longConversationGroups(12, 2));
    const onLoop = decodeJobWork(stored);
    const work = await decodeJobWorkInThread(stored);
    if (work.kind !== "rl" || onLoop.kind !== "rl") throw new Error("an RL job must stay RL");
    expect(work.config).toEqual(onLoop.config);
    expect(work.trainableTrajectories).toBe(summarizeTrainability(onLoop.groups, false).numTrainableTrajectories);
    expect(work.trainableTrajectories).toBeGreaterThan(0);
    expect(openRunWork({ ...work, rewardStdDevHistory: [{ step: 1, value: 0.5 }] })).toEqual({ ...onLoop, rewardStdDevHistory: [{ step: 1, value: 0.5 }] });
  });

  it("describes an SFT job with its row count and metadata", async () => {
    const stored = sftWork(sftRows(5), '{"num_trajectories": 5}');
    const work = await decodeJobWorkInThread(stored);
    expect(work).toMatchObject({ kind: "sft", fileName: "train.jsonl", rows: 5, metadata: { num_trajectories: 5 } });
    if (work.kind !== "sft") throw new Error("an SFT job must stay SFT");
    expect(openRunWork(work)).toEqual(decodeJobWork(stored));
  });

  it("rejects bad data with the decoder's message", async () => {
    const stored = sftWork(["not json"]);
    const message = (() => {
      try {
        decodeJobWork(stored);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toBeTruthy();
    await expect(decodeJobWorkInThread(stored)).rejects.toThrow(message!);
  });

  it("answers jobs sent at once each with its own work, a bad one failing alone", async () => {
    const [rl, sft, bad] = await Promise.allSettled([decodeJobWorkInThread(rlWork(longConversationGroups(3, 2))), decodeJobWorkInThread(sftWork(sftRows(5))), decodeJobWorkInThread(sftWork(["not json"]))]);
    expect(rl.status === "fulfilled" && rl.value.kind).toBe("rl");
    expect(sft.status === "fulfilled" && sft.value.kind === "sft" && sft.value.rows).toBe(5);
    expect(bad.status).toBe("rejected");
    // The thread lives on for the next job.
    expect((await decodeJobWorkInThread(sftWork(sftRows(2)))).kind).toBe("sft");
  });

  it("decodes a large job with the event loop only copying its text once, where decoding it on the loop holds it longer", async () => {
    const stored = rlWork(longConversationGroups(4000, 8));
    const text = stored.kind === "rl" ? stored.input : "";
    // What handing the text to any thread costs at least: one copy of it, on this thread.
    collectGarbage();
    const copy = await longestLoopStall(async () => new TextEncoder().encode(text));
    // The thread before the loop: the garbage of decoding on the loop would be collected during the other.
    let trainable = 0;
    collectGarbage();
    const inThread = await longestLoopStall(async () => {
      const work = await decodeJobWorkInThread(stored);
      if (work.kind === "rl") trainable = work.trainableTrajectories;
    });
    collectGarbage();
    const onLoop = await longestLoopStall(async () => decodeJobWork(stored));
    console.log(`${(text.length / 1e6).toFixed(1)} MB of trajectories: longest event-loop stall ${onLoop.toFixed(0)} ms decoding on the loop, ${inThread.toFixed(0)} ms on a thread (one copy of the text: ${copy.toFixed(0)} ms)`);
    expect(trainable).toBe(4000);
    expect(inThread).toBeLessThan(100 + copy);
    // 2 to 2.7 times on a quiet machine, 1.8 under a full suite's load: the copy is most of what is left.
    expect(onLoop).toBeGreaterThan(1.5 * inThread);
  }, 120_000);
});
