import type { Kysely } from "kysely";
import { decodeJson } from "./json.js";
import type { Database } from "./schema.js";
import { listActiveJobsOfModel } from "./training-jobs.js";

interface KlSettings {
  kl_penalty_coef?: number;
  kl_penalty_reference_step?: number | null;
  kl_penalty_step_lag?: number | null;
}

/**
 * The checkpoint steps that queued or running jobs of a model need, which must not be deleted:
 * - the latest checkpoint, while any job is active (a queued job trains from whatever is latest
 *   when it starts);
 * - the base and KL-reference steps a running job fixed when it started;
 * - a queued job's `kl_penalty_reference_step`, and for a queued `kl_penalty_step_lag` L every
 *   existing step from latest − L upward (its reference is only known once it starts).
 */
export async function stepsNeededByActiveJobs(db: Kysely<Database>, modelId: string): Promise<Set<number>> {
  const jobs = await listActiveJobsOfModel(db, modelId);
  const needed = new Set<number>();
  if (jobs.length === 0) return needed;
  const steps = (await db.selectFrom("checkpoints").select("step").where("model_id", "=", modelId).execute()).map((row) => row.step);
  const latest = steps.length > 0 ? Math.max(...steps) : undefined;
  if (latest !== undefined) needed.add(latest);
  for (const job of jobs) {
    if (job.base_step !== null) needed.add(job.base_step);
    if (job.kl_reference_step !== null) needed.add(job.kl_reference_step);
    if (job.kind !== "rl" || job.base_step !== null) continue;
    const kl = decodeJson<KlSettings>(job.config);
    if (!((kl.kl_penalty_coef ?? 0) > 0)) continue;
    if (kl.kl_penalty_reference_step != null) needed.add(kl.kl_penalty_reference_step);
    if (kl.kl_penalty_step_lag != null && latest !== undefined) {
      const from = Math.max(0, latest - kl.kl_penalty_step_lag);
      for (const step of steps) if (step >= from) needed.add(step);
    }
  }
  return needed;
}
