import type { FastifyInstance } from "fastify";
import { modelRoutes } from "./models-routes.js";

/** The preview training API under /v1/preview. */
export async function trainingRoutes(app: FastifyInstance): Promise<void> {
  await app.register(modelRoutes);
}
