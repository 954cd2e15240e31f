import type { StoredJobWork } from "./job-input.js";

/**
 * A job's stored work on its way into a thread, its one large text (an RL job's trajectories, an
 * SFT job's data file) as UTF-8 bytes that are transferred, not copied. Handing a 20 MB string to
 * a new thread as `workerData` held the event loop 0.2–0.4 s (the structured clone copies it on
 * the sending thread); encoding it takes a few milliseconds, moving the bytes none.
 */
export interface PackedStoredWork {
  /** The work with its large text emptied. */
  work: StoredJobWork;
  text: Uint8Array;
}

/** The packed work and what to put in the thread's `transferList`. */
export function packStoredWork(stored: StoredJobWork): { packed: PackedStoredWork; transferList: ArrayBuffer[] } {
  const text = new TextEncoder().encode(stored.kind === "rl" ? stored.input : stored.data.text);
  const work: StoredJobWork = stored.kind === "rl" ? { ...stored, input: "" } : ({ ...stored, data: { ...stored.data, text: "" } } as StoredJobWork);
  return { packed: { work, text }, transferList: [text.buffer as ArrayBuffer] };
}

/** The stored work again, on the thread that received it. */
export function unpackStoredWork({ work, text }: PackedStoredWork): StoredJobWork {
  const decoded = new TextDecoder().decode(text);
  return work.kind === "rl" ? { ...work, input: decoded } : ({ ...work, data: { ...work.data, text: decoded } } as StoredJobWork);
}
