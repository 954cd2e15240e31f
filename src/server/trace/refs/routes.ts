import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { TraceServices } from "../../../trace/services.js";
import { principalOf } from "../../auth.js";
import { defineRoute } from "../../routes.js";
import { StringList } from "../common/schemas.js";
import { useLosslessJson } from "../common/scope.js";

const RefsReadBatchReq = z.object({ refs: StringList });
const RefsReadBatchRes = z.object({ vals: z.array(z.unknown()).describe("Each ref's value, in request order; null for a deleted object") });

/**
 * POST /refs/read_batch (`docs/api/trace.md#refs-read`): values of refs, in request order; deleted objects
 * read as null.
 */
export async function refRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  defineRoute(
    app,
    { method: "POST", url: "/refs/read_batch", summary: "Resolve refs to values", tags: ["trace: refs"], body: RefsReadBatchReq, response: RefsReadBatchRes, errorStyle: "trace", security: "basic" },
    async ({ body }, request) => ({
      vals: await options.trace.refs.readBatch(principalOf(request).entity, body.refs),
    }),
  );
}
