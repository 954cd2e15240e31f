import { Ajv, type ValidateFunction } from "ajv";
import { type Feedback, feedbackRow } from "../../../store/trace/feedback.js";
import { uuidv7 } from "../../../store/trace/ids.js";
import type { RefReader } from "../../../trace/refs-reader.js";
import { InvalidRefError, parseWeaveRef, type WeaveRef } from "../../../store/trace/refs.js";
import { nowTimestamp } from "../../../store/trace/timestamps.js";
import type { TraceCallStore } from "../../../store/trace/trace-store.js";
import { ApiError } from "../../errors.js";
import { countEmoji, demojize, detone } from "./emoji.js";
import type { FeedbackCreateBody } from "./protocol.js";

export interface FeedbackDeps {
  calls: TraceCallStore;
  /** Reads AnnotationSpec objects, to check annotation values against their spec. */
  refs: RefReader;
  /** Checks `queue_id`: the queue must exist in the project. */
  queues: { queueExists(projectId: string, queueId: string): Promise<boolean> };
}

const REACTION = "wandb.reaction.1";
const NOTE = "wandb.note.1";
const ANNOTATION = "wandb.annotation";
const RUNNABLE = "wandb.runnable";
const AGENT_MONITOR = "wandb.agent_monitor";
const AGENT_USER_FEEDBACK = "wandb.agent_user_feedback";
const MAX_NOTE_LENGTH = 1024;
const MAX_PAYLOAD_BYTES = 1024 * 1024;

const invalid = (message: string) => new ApiError(400, message);

function refOf(ref: string, kinds: WeaveRef["kind"][], label: string): WeaveRef {
  let parsed: WeaveRef | undefined;
  try {
    parsed = parseWeaveRef(ref);
  } catch (error) {
    if (!(error instanceof InvalidRefError)) throw error;
  }
  if (!parsed || !kinds.includes(parsed.kind)) throw invalid(`Invalid ${label}: '${ref}' is not a ${kinds.join(" or ")} ref`);
  return parsed;
}

const ajv = new Ajv({ strict: false, allErrors: false });
const validators = new Map<string, { schema: object; validate: ValidateFunction }>();
const MAX_VALIDATORS = 200;

/** A compiled validator per distinct schema; the oldest are dropped (from Ajv too) beyond 200. */
function validatorFor(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  const cached = validators.get(key);
  if (cached) return cached.validate;
  const validate = ajv.compile(schema);
  validators.set(key, { schema, validate });
  if (validators.size > MAX_VALIDATORS) {
    const [oldestKey, oldest] = validators.entries().next().value!;
    validators.delete(oldestKey);
    ajv.removeSchema(oldest.schema);
  }
  return validate;
}

/**
 * The feedback rules of `docs/api/trace.md#feedback` (after Weave's feedback.py): payload shapes of the
 * built-in types, which refs each type needs or may not have, scorer fields only on scorer
 * feedback, annotation values against their AnnotationSpec, and the 1 MiB payload limit. Returns
 * the row to store, with the server's id, time, user and processed payload.
 */
export async function prepareFeedback(req: FeedbackCreateBody, wbUserId: string, deps: Omit<FeedbackDeps, "calls">): Promise<Feedback> {
  const type = req.feedback_type;
  const payload = { ...req.payload };
  if (type === REACTION) {
    if (typeof payload.emoji !== "string") throw invalid(`Invalid payload for feedback_type ${type}: 'emoji' must be a string`);
    if (countEmoji(payload.emoji) !== 1) throw invalid("Value of emoji key in payload must be exactly one emoji");
    const detoned = detone(payload.emoji);
    Object.assign(payload, { alias: demojize(payload.emoji), detoned, detoned_alias: demojize(detoned) });
  } else if (type === NOTE) {
    const note = payload.note;
    if (typeof note !== "string" || note.length < 1 || note.length > MAX_NOTE_LENGTH) {
      throw invalid(`Invalid payload for feedback_type ${type}: 'note' must be a string of 1 to ${MAX_NOTE_LENGTH} characters`);
    }
  }

  if (type.startsWith(ANNOTATION)) {
    if (!type.startsWith(`${ANNOTATION}.`)) throw invalid(`Invalid annotation feedback type: ${type}`);
    if (!req.annotation_ref) throw invalid("annotation_ref is required for annotation feedback");
    const ref = refOf(req.annotation_ref, ["object"], "annotation_ref");
    if (ref.kind === "object" && ref.name !== type.slice(ANNOTATION.length + 1)) throw invalid(`annotation_ref must point to an object with name ${type.slice(ANNOTATION.length + 1)}`);
    if (!("value" in payload)) throw invalid(`Invalid payload for feedback_type ${type}: 'value' is required`);
  } else if (req.annotation_ref) {
    throw invalid("annotation_ref is not allowed for non-annotation feedback");
  } else if (type.startsWith(RUNNABLE)) {
    if (!type.startsWith(`${RUNNABLE}.`)) throw invalid(`Invalid runnable feedback type: ${type}`);
    if (!req.runnable_ref) throw invalid("runnable_ref is required for runnable feedback");
    const ref = refOf(req.runnable_ref, ["op", "object"], "runnable_ref");
    if ((ref.kind === "op" || ref.kind === "object") && ref.name !== type.slice(RUNNABLE.length + 1)) throw invalid(`runnable_ref must point to an object with name ${type.slice(RUNNABLE.length + 1)}`);
    if (ref.kind === "op" && !req.call_ref) throw invalid("call_ref is required for runnable feedback on ops");
    if (!("output" in payload)) throw invalid(`Invalid payload for feedback_type ${type}: 'output' is required`);
  } else if (type === AGENT_MONITOR) {
    if (!req.runnable_ref) throw invalid("runnable_ref is required for agent monitor feedback");
    if (!req.call_ref) throw invalid("call_ref is required for agent monitor feedback");
    if (!req.trigger_ref) throw invalid("trigger_ref is required for agent monitor feedback");
  } else if (req.runnable_ref) {
    throw invalid("runnable_ref is not allowed for non-runnable feedback");
  } else if (req.call_ref) {
    throw invalid("call_ref is not allowed for non-runnable feedback");
  } else if (req.trigger_ref) {
    throw invalid("trigger_ref is not allowed for non-runnable feedback");
  }

  const scorerFields = [req.scorer_tags, req.scorer_tag_reasons, req.scorer_tag_confidences, req.scorer_ratings, req.scorer_rating_reasons, req.scorer_rating_confidences];
  const hasScorerFields = scorerFields.some((field) => field && (Array.isArray(field) ? field.length > 0 : Object.keys(field).length > 0));
  if (hasScorerFields && !(type.startsWith(RUNNABLE) || type === AGENT_MONITOR || type === AGENT_USER_FEEDBACK)) {
    throw invalid(
      "scorer_tags, scorer_tag_reasons, scorer_tag_confidences, scorer_ratings, scorer_rating_reasons, and scorer_rating_confidences are only allowed on wandb.agent_monitor, wandb.agent_user_feedback, or wandb.runnable feedback",
    );
  }
  if (type === AGENT_USER_FEEDBACK && !(req.scorer_tags && req.scorer_tags.length > 0)) throw invalid("scorer_tags is required for agent user feedback");

  if (req.annotation_ref) await checkAnnotationValue(req, payload.value, deps);
  if (req.runnable_ref) refOf(req.runnable_ref, ["op", "object"], "runnable_ref");
  if (req.call_ref) refOf(req.call_ref, ["call"], "call_ref");
  if (req.trigger_ref) refOf(req.trigger_ref, ["object"], "trigger_ref");
  if (req.queue_id && !(await deps.queues.queueExists(req.project_id, req.queue_id))) {
    throw invalid(`Queue ${req.queue_id} not found or has been deleted`);
  }
  if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_BYTES) throw invalid("Feedback payload too large");

  return feedbackRow({
    id: req.id ?? uuidv7(),
    project_id: req.project_id,
    weave_ref: req.weave_ref,
    wb_user_id: wbUserId,
    creator: req.creator ?? null,
    created_at: nowTimestamp(),
    feedback_type: type,
    payload,
    annotation_ref: req.annotation_ref ?? null,
    runnable_ref: req.runnable_ref ?? null,
    call_ref: req.call_ref ?? null,
    trigger_ref: req.trigger_ref ?? null,
    queue_id: req.queue_id ?? null,
    ...definedOnly({
      scorer_tags: req.scorer_tags,
      scorer_tag_reasons: req.scorer_tag_reasons,
      scorer_tag_confidences: req.scorer_tag_confidences,
      scorer_ratings: req.scorer_ratings,
      scorer_rating_reasons: req.scorer_rating_reasons,
      scorer_rating_confidences: req.scorer_rating_confidences,
      span_agent_name: req.span_agent_name,
      span_agent_version: req.span_agent_version,
      span_status_code: req.span_status_code,
      span_conversation_id: req.span_conversation_id,
      span_trace_id: req.span_trace_id,
      scorer_trace_id: req.scorer_trace_id,
    }),
  });
}

/** The entries whose value is neither null nor undefined (absent fields take the row's defaults). */
function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<{ [K in keyof T]: NonNullable<T[K]> }> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined)) as Partial<{ [K in keyof T]: NonNullable<T[K]> }>;
}

/** The annotation's value must satisfy the `field_schema` (JSON Schema) of its AnnotationSpec. */
async function checkAnnotationValue(req: FeedbackCreateBody, value: unknown, deps: Pick<FeedbackDeps, "refs">): Promise<void> {
  const ref = refOf(req.annotation_ref!, ["object"], "annotation_ref");
  if (`${ref.entity}/${ref.project}` !== req.project_id) throw invalid(`Annotation ref ${req.annotation_ref} does not match project id ${req.project_id}`);
  const [spec] = await deps.refs.tryReadBatch(ref.entity, [req.annotation_ref!]);
  if (spec === null || spec === undefined) throw invalid(`Annotation ref ${req.annotation_ref} not found`);
  // Stored values keep Python's number spellings (1.0 as a float wrapper); the validator needs plain JSON.
  const schema = JSON.parse(JSON.stringify((spec as { field_schema?: unknown }).field_schema ?? {})) as unknown;
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema as object);
  } catch {
    throw invalid(`Annotation ref ${req.annotation_ref} is not a valid annotation spec`);
  }
  if (!validate(value)) throw invalid("Feedback payload does not match annotation spec");
}
