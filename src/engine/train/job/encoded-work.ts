import v8 from "node:v8";
import type { EncodedJobWork, RlJobWork, SftJobWork } from "./types.js";

/** The work an `EncodedJobWork` carries, less the reward history. */
export type EncodableJobWork = Omit<RlJobWork, "rewardStdDevHistory"> | SftJobWork;

export function encodeJobWork(work: EncodableJobWork): Uint8Array {
  return v8.serialize(work);
}

/** The work itself, decoded on the thread that calls this (the trainer's). */
export function openJobWork(work: RlJobWork | SftJobWork | EncodedJobWork): RlJobWork | SftJobWork {
  if (work.kind !== "encoded") return work;
  const decoded = v8.deserialize(work.bytes) as EncodableJobWork;
  return decoded.kind === "rl" ? { ...decoded, rewardStdDevHistory: work.rewardStdDevHistory } : decoded;
}
