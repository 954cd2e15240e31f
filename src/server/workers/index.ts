import type { FastifyInstance } from "fastify";
import { requireApiKey } from "../auth.js";
import { checkpointRoutes } from "./checkpoint-routes.js";
import { claimRoute } from "./claim-route.js";
import { planRoutes } from "./plan-routes.js";
import { reportRoutes } from "./report-routes.js";

/**
 * The worker protocol under /v1/worker: how an external trainer (the PyTorch trainer in python/)
 * takes jobs. Only worker keys (`flywheel keys create --role worker`) are accepted here, and they
 * are accepted nowhere else. A thin layer over the job queue of `flywheel worker`: the same claim,
 * lease, event, commit and give-back functions of the store.
 */
export async function workerRoutes(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", requireApiKey(app.services.store, "detail", ["bearer"], "worker"));
  await app.register(claimRoute);
  await app.register(reportRoutes);
  await app.register(planRoutes);
  await app.register(checkpointRoutes);
}
