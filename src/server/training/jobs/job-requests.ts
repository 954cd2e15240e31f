import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { RlTrainingConfig } from "../../../engine/train/config.js";
import { getCheckpointByStep, latestCheckpoint } from "../../../store/checkpoints.js";
import type { Store } from "../../../store/db.js";
import type { TrainingJobRow } from "../../../store/training-jobs.js";
import { listActiveJobsOfModel } from "../../../store/training-jobs.js";
import { RequestValidationError } from "../../validation.js";
import type { JobRes } from "./protocol.js";

/** Helpers shared by the two job-creating routes. */

export function toJobResponse(job: TrainingJobRow, waitingFor: string | null = null): z.output<typeof JobRes> {
  return {
    id: job.id,
    model_id: job.model_id,
    kind: job.kind,
    status: job.status,
    created_at: job.created_at,
    started_at: job.started_at,
    ended_at: job.ended_at,
    training_start: job.started_at,
    training_end: job.ended_at,
    error_message: job.error_message,
    step: job.status === "succeeded" ? job.result_step : null,
    waiting_for: waitingFor,
  };
}

/** sha256 of the request as sent (keys sorted), to tell a retry from a different request. */
export function hashRequest(kind: string, body: unknown): string {
  return createHash("sha256").update(kind).update("\n").update(canonicalJson(body)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const IDEMPOTENCY_LOC = ["header", "idempotency-key"];

/** The Idempotency-Key header: 1–255 visible ASCII characters, or undefined when absent. */
export function readIdempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers["idempotency-key"];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw RequestValidationError.single(IDEMPOTENCY_LOC, "Idempotency-Key must be 1 to 255 visible ASCII characters", "string_pattern_mismatch");
  }
  return key;
}

/**
 * An earlier job created with the same Idempotency-Key: the same request gets the same job; a
 * different request under a used key is a 422 (as the IETF Idempotency-Key draft prescribes).
 */
export function replayIdempotent(existing: TrainingJobRow, requestHash: string): TrainingJobRow {
  if (existing.request_hash !== requestHash) {
    throw RequestValidationError.single(IDEMPOTENCY_LOC, "this Idempotency-Key was already used with a different request", "idempotency_key_reused");
  }
  return existing;
}

/**
 * A named KL reference step must exist when the job is created, or be one that a job queued
 * ahead of it will create. (Step 0 is always the base weights.)
 */
export async function checkKlReferenceStep(store: Store, modelId: string, config: RlTrainingConfig): Promise<void> {
  const step = config.kl_penalty_reference_step;
  if (!(config.kl_penalty_coef > 0) || step === null || step === 0) return;
  if (await getCheckpointByStep(store.db, modelId, step)) return;
  const latest = (await latestCheckpoint(store.db, modelId))?.step ?? 0;
  const ahead = (await listActiveJobsOfModel(store.db, modelId)).length;
  if (step > latest && step <= latest + ahead) return;
  throw RequestValidationError.single(["body", "experimental_config", "kl_penalty_reference_step"], `the model has no checkpoint at step ${step} (latest is ${latest}), and no queued job will create it`);
}
