import type { FastifyInstance } from "fastify";
import { artifactRoutes } from "./artifacts/routes.js";
import { browseRoutes } from "./browse/routes.js";
import { checkpointDownloadRoute } from "./checkpoints/download-route.js";
import { checkpointImportRoute } from "./checkpoints/import-route.js";
import { jobRoutes } from "./jobs/routes.js";
import { logRoute } from "./trajectories/log-route.js";
import { modelRoutes } from "./models/routes.js";

/** The preview training API under /v1/preview. */
export async function trainingRoutes(app: FastifyInstance): Promise<void> {
  await app.register(modelRoutes);
  await app.register(checkpointDownloadRoute);
  await app.register(checkpointImportRoute);
  await app.register(logRoute);
  await app.register(jobRoutes);
  await app.register(artifactRoutes);
  await app.register(browseRoutes);
}
