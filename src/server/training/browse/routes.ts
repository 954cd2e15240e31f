import type { FastifyInstance } from "fastify";
import { groupAdvantages } from "../../../engine/train/advantages.js";
import type { RlTrainingConfig } from "../../../engine/train/config.js";
import { decodeJson } from "../../../store/json.js";
import { readModelHistory } from "../../../store/model-history.js";
import { readTurnLogprobs } from "../../../store/token-logprobs.js";
import { pageModelJobs } from "../../../store/model-jobs.js";
import { listModels } from "../../../store/models.js";
import { listEntityProjects } from "../../../store/projects.js";
import { getTrainingJob } from "../../../store/training-jobs.js";
import type { RlJobInput } from "../../../worker/job-input.js";
import { principalOf } from "../../auth.js";
import { ApiError, notFound } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { ModelHistoryRes, ModelJobsQuery, ModelJobsRes, ModelListQuery, ModelListRes, ProjectListRes, TrajectoryGroupsQuery, TrajectoryGroupsRes } from "./protocol.js";
import { toJobResponse } from "../jobs/job-requests.js";
import { buildModelHistory } from "./model-history.js";
import { JobIdParams } from "../jobs/protocol.js";
import { modelView } from "../models/model-view.js";
import { ownModel } from "../common/own-model.js";
import { ModelIdParams } from "../models/protocol.js";

const tags = ["training"];

/**
 * Read-only routes beyond the preview interface (what the web UI browses): the caller's models,
 * projects and jobs, and the trajectory groups an RL job trained on. All scoped to the key's entity.
 */
export async function browseRoutes(app: FastifyInstance): Promise<void> {
  const { store } = app.services;

  defineRoute(app, { method: "GET", url: "/preview/models", summary: "List the caller's trainable models (oldest first)", tags, query: ModelListQuery, response: ModelListRes, security: "bearer" }, async ({ query }, request) => {
    const models = await listModels(store.db, principalOf(request).entity);
    const listed = query.project === undefined ? models : models.filter((model) => model.project === query.project);
    return { object: "list", data: listed.map(modelView) };
  });

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/models/:model_id/training-jobs",
      summary: "List a model's training jobs (cursor page, newest first by default)",
      tags,
      params: ModelIdParams,
      query: ModelJobsQuery,
      response: ModelJobsRes,
      security: "bearer",
    },
    async ({ params, query }, request) => {
      const model = await ownModel(store.db, principalOf(request).entity, params.model_id);
      const page = await pageModelJobs(store.db, model.id, query);
      return { ...page, data: page.data.map((job) => toJobResponse(job)) };
    },
  );

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/models/:model_id/history",
      summary: "A model's metrics per step: logged trajectory metrics, and each job's rollout and gradient-step metrics",
      tags,
      params: ModelIdParams,
      response: ModelHistoryRes,
      security: "bearer",
    },
    async ({ params }, request) => {
      const model = await ownModel(store.db, principalOf(request).entity, params.model_id);
      return { object: "list", data: buildModelHistory(await readModelHistory(store.db, model.id)) };
    },
  );

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/training-jobs/:training_job_id/trajectory-groups",
      summary: "Read the trajectory groups an RL job was submitted with, each trajectory with its advantage and the trainer's recomputed token logprobs",
      tags,
      params: JobIdParams,
      query: TrajectoryGroupsQuery,
      response: TrajectoryGroupsRes,
      security: "bearer",
    },
    async ({ params, query }, request) => {
      const job = await getTrainingJob(store.db, principalOf(request).entity, params.training_job_id);
      if (!job) throw notFound(`Training job '${params.training_job_id}' not found`);
      if (job.kind !== "rl") throw new ApiError(400, `Training job '${job.id}' is an SFT job; only RL jobs have trajectory groups`);
      const groups = decodeJson<RlJobInput>(job.input).trajectory_groups;
      const { scale_rewards } = decodeJson<RlTrainingConfig>(job.config);
      const trainerLogprobs = await readTurnLogprobs(store.db, job.id, query.offset, query.offset + query.limit);
      const data = groups.slice(query.offset, query.offset + query.limit).map((group, i) => {
        const advantages = groupAdvantages(
          group.trajectories.map((trajectory) => trajectory.reward),
          scale_rewards,
        );
        return {
          index: query.offset + i,
          trajectories: group.trajectories.map((trajectory, t) => ({ ...trajectory, advantage: advantages[t]!, trainer_logprobs: trainerLogprobs.get(query.offset + i)?.get(t) ?? null })),
          exceptions: group.exceptions,
        };
      });
      return { object: "list", data, total: groups.length, offset: query.offset, scale_rewards };
    },
  );

  defineRoute(app, { method: "GET", url: "/preview/projects", summary: "List the caller's projects: those with models and those with traces", tags, response: ProjectListRes, security: "bearer" }, async (_input, request) => {
    const { entity } = principalOf(request);
    return { object: "list", entity, data: await listEntityProjects(store.db, entity) };
  });
}
