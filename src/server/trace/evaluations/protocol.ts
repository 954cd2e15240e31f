import { z } from "zod";
import { ProjectId, StringList } from "../common/schemas.js";

/** Server-run evaluations and scoring (`docs/api/trace.md#evaluations`): requests and answers. */

export const EvaluateModelReq = z.object({ project_id: ProjectId, evaluation_ref: z.string().describe("Evaluation ref"), model_ref: z.string().describe("LLMStructuredCompletionModel ref, or a model this server serves") });
export const EvaluationStatusReq = z.object({ project_id: ProjectId, call_id: z.string() });
export const CallsScoreReq = z.object({ project_id: ProjectId, call_ids: StringList.min(1).max(1000), scorer_refs: StringList.min(1).max(100) });

export const EvaluateModelRes = z.object({ call_id: z.string().describe("The Evaluation.evaluate call, which runs in the background") });

export const EvaluationStatusRes = z.object({
  status: z.discriminatedUnion("code", [
    z.object({ code: z.literal("not_found") }),
    z.object({ code: z.literal("running"), completed_rows: z.int().min(0), total_rows: z.int().min(0) }),
    z.object({ code: z.literal("failed"), error: z.string().nullable() }),
    z.object({ code: z.literal("complete"), output: z.unknown().describe("The evaluation's summary, as recorded") }),
  ]),
});
