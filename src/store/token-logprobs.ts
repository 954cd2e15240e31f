import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** One sampled turn's logprobs as the trainer recomputed them (NaN: not scored). */
export interface StoredTurnLogprobs {
  groupIndex: number;
  trajectoryIndex: number;
  itemIndex: number;
  logprobs: ArrayLike<number>;
}

/** Float32 is ample for a logprob shown to a person and a quarter of JSON's size. */
export function packLogprobs(logprobs: ArrayLike<number>): string {
  const packed = Float32Array.from(logprobs);
  return Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength).toString("base64");
}

export function unpackLogprobs(text: string): (number | null)[] {
  const bytes = Buffer.from(text, "base64");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: (number | null)[] = [];
  for (let offset = 0; offset + 4 <= bytes.byteLength; offset += 4) {
    const value = view.getFloat32(offset, true);
    out.push(Number.isFinite(value) ? value : null);
  }
  return out;
}

/** Stores the turns of one step; a turn stored again (a job retried) replaces the earlier row. */
export async function saveTurnLogprobs(db: Kysely<Database>, jobId: string, turns: readonly StoredTurnLogprobs[]): Promise<void> {
  for (let i = 0; i < turns.length; i += 500) {
    const rows = turns.slice(i, i + 500).map((turn) => ({ job_id: jobId, group_index: turn.groupIndex, trajectory_index: turn.trajectoryIndex, item_index: turn.itemIndex, logprobs: packLogprobs(turn.logprobs) }));
    await db
      .insertInto("training_job_token_logprobs")
      .values(rows)
      .onConflict((oc) => oc.columns(["job_id", "group_index", "trajectory_index", "item_index"]).doUpdateSet((eb) => ({ logprobs: eb.ref("excluded.logprobs") })))
      .execute();
  }
}

/**
 * The trainer's logprobs of the groups [fromGroup, toGroup) of a job: group → trajectory → item index
 * (as text, the JSON key) → one value per sampled token, null where not scored.
 */
export async function readTurnLogprobs(db: Kysely<Database>, jobId: string, fromGroup: number, toGroup: number): Promise<Map<number, Map<number, Record<string, (number | null)[]>>>> {
  const rows = await db
    .selectFrom("training_job_token_logprobs")
    .select(["group_index", "trajectory_index", "item_index", "logprobs"])
    .where("job_id", "=", jobId)
    .where("group_index", ">=", fromGroup)
    .where("group_index", "<", toGroup)
    .execute();
  const groups = new Map<number, Map<number, Record<string, (number | null)[]>>>();
  for (const row of rows) {
    const group = groups.get(Number(row.group_index)) ?? new Map<number, Record<string, (number | null)[]>>();
    groups.set(Number(row.group_index), group);
    const trajectory = group.get(Number(row.trajectory_index)) ?? {};
    group.set(Number(row.trajectory_index), trajectory);
    trajectory[String(row.item_index)] = unpackLogprobs(row.logprobs);
  }
  return groups;
}
