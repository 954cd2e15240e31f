import { z } from "zod";
import { TrainingInputError } from "../../../engine/train/errors.js";
import { completionsExchange, messagesExchange, responsesExchange } from "../../../engine/train/exchange-kinds.js";
import { type HistoryItem, isChoice, type TrajectoryGroup } from "../../../engine/train/trajectory.js";

/**
 * Trajectory groups as ART sends them (docs/api/training.md#trajectories). Unknown keys are kept (ART dumps
 * OpenAI SDK objects with extras), documented fields are type-checked, and every error names the
 * exact place, e.g. `trajectory_groups.0.trajectories.2.messages_and_choices.1.role`.
 */

const TopLogprob = z.looseObject({ token: z.string(), logprob: z.number() });

/** A sampled token: its text, or `token_id:<id>` (vLLM's `return_tokens_as_token_ids`), whose id must be a real one. */
const SampledToken = z.string().refine((token) => !token.startsWith("token_id:") || /^token_id:\d+$/.test(token), {
  message: "a 'token_id:' token must name a non-negative integer id, e.g. token_id:42",
});

const TokenLogprob = z.looseObject({
  token: SampledToken,
  logprob: z.number(),
  bytes: z.array(z.int().min(0).max(255)).nullish(),
  top_logprobs: z.array(TopLogprob).nullish(),
});

/** Exact token ids as vLLM reports them (`return_token_ids`). */
const TokenIds = z.array(z.number().int().min(0));

const ToolCall = z.looseObject({ id: z.string().nullish(), type: z.string().nullish(), function: z.looseObject({ name: z.string(), arguments: z.string() }) });

/** A sampled choice (the OpenAI SDK's `Choice` dump): the items the trainer learns from. */
const Choice = z.looseObject({
  message: z.looseObject({
    role: z.literal("assistant").optional(),
    content: z.string().nullish(),
    tool_calls: z.array(ToolCall).nullish(),
  }),
  logprobs: z.looseObject({ content: z.array(TokenLogprob).nullish(), refusal: z.array(TokenLogprob).nullish() }).nullish(),
  finish_reason: z.string().nullish(),
  index: z.number().int().optional(),
  token_ids: TokenIds.nullish(),
  prompt_token_ids: TokenIds.nullish(),
});

const Message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  tool_calls: z.array(ToolCall).nullish(),
});

/**
 * Choice or message, told apart by the docs/api/training.md#trajectory-json discriminator; errors keep their
 * nested paths.
 */
const Item = z.unknown().transform((value, ctx) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    ctx.issues.push({ code: "invalid_type", expected: "object", input: value, path: [], message: "expected an object" });
    return z.NEVER;
  }
  const result = (isChoice(value) ? Choice : Message).safeParse(value, { reportInput: true });
  if (!result.success) {
    ctx.issues.push(...(result.error.issues as typeof ctx.issues));
    return z.NEVER;
  }
  return result.data as HistoryItem;
});

/** OpenAI tool definitions; ART's tokenizer also accepts bare function objects. */
const Tool = z.looseObject({});

const History = z.looseObject({
  messages_and_choices: z.array(Item),
  tools: z
    .array(Tool)
    .nullish()
    .transform((tools) => tools ?? null),
});

/**
 * One captured Chat Completions call (ART's `ChatCompletionsExchange`): the request body as sent
 * and the response; it trains like a history of the request's messages and the response's choice.
 */
const ChatCompletionsExchange = z.looseObject({
  request: z.looseObject({ messages: z.array(Message), tools: z.array(Tool).nullish() }),
  response: z.looseObject({
    choices: z.array(Choice).refine((choices) => choices.length === 1, { message: "A trained exchange needs a response with exactly one choice" }),
    prompt_token_ids: TokenIds.nullish(),
  }),
  start_time: z.string().nullish(),
  end_time: z.string().nullish(),
  model: z.string().nullish(),
});

/** ART's `TrajectoryExchanges`; its dumps leave out empty lists. The other kinds are read (and checked) when the job is validated. */
const Exchanges = z
  .looseObject({
    chat_completions: z.array(ChatCompletionsExchange).nullish(),
    completions: z.array(z.unknown()).nullish(),
    responses: z.array(z.unknown()).nullish(),
    messages: z.array(z.unknown()).nullish(),
  })
  .transform((exchanges) => ({
    chat_completions: exchanges.chat_completions ?? [],
    completions: exchanges.completions ?? [],
    responses: exchanges.responses ?? [],
    messages: exchanges.messages ?? [],
  }));

const MetricValues = z.record(z.string(), z.union([z.number(), z.boolean()]));

/**
 * A trajectory in either of ART's forms: `messages_and_choices` (+ `tools`, `additional_histories`)
 * or `exchanges`, never both. Fields ART leaves out at their defaults (it dumps with
 * exclude_defaults: reward 0, empty lists and maps) take those defaults.
 */
export const TrajectorySchema = z
  .looseObject({
    exchanges: Exchanges.nullish(),
    messages_and_choices: z.array(Item).nullish(),
    tools: z.array(Tool).nullish(),
    additional_histories: z.array(History).nullish(),
    reward: z.number().default(0),
    initial_policy_version: z.number().int().nullish(),
    final_policy_version: z.number().int().nullish(),
    metrics: MetricValues.nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
    logs: z.array(z.string()).nullish(),
  })
  .superRefine((trajectory, ctx) => {
    const exchanges = trajectory.exchanges;
    if (!exchanges) return;
    // The other kinds are read as the chat exchange each amounts to; one that cannot be is refused here, not by the worker.
    for (const [kind, convert] of [
      ["completions", completionsExchange],
      ["responses", responsesExchange],
      ["messages", messagesExchange],
    ] as const) {
      exchanges[kind].forEach((exchange, index) => {
        try {
          convert(exchange, ["exchanges", kind, index]);
        } catch (error) {
          if (!(error instanceof TrainingInputError)) throw error;
          ctx.addIssue({ code: "custom", path: error.loc, message: error.detail });
        }
      });
    }
    const hasExchanges = Object.values(exchanges).some((list) => list.length > 0);
    const hasHistories = (trajectory.messages_and_choices ?? []).length > 0 || (trajectory.tools ?? null) !== null || (trajectory.additional_histories ?? []).length > 0;
    if (hasExchanges && hasHistories) {
      ctx.addIssue({ code: "custom", path: [], message: "This trajectory has both exchanges and messages_and_choices (or tools, additional_histories); send one form only" });
    }
  })
  .transform((trajectory) => ({
    ...trajectory,
    exchanges: trajectory.exchanges ?? { chat_completions: [], completions: [], responses: [], messages: [] },
    messages_and_choices: trajectory.messages_and_choices ?? [],
    tools: trajectory.tools ?? null,
    additional_histories: trajectory.additional_histories ?? [],
    metrics: trajectory.metrics ?? {},
    metadata: trajectory.metadata ?? {},
    logs: trajectory.logs ?? [],
  }));

const RolloutException = z.looseObject({ type: z.string().nullish(), message: z.string().nullish(), traceback: z.string().nullish() });

/** Typed as the engine's `TrajectoryGroup`, so the compiler checks that this schema produces exactly the shape the job runner reads. */
export const TrajectoryGroupSchema: z.ZodType<TrajectoryGroup, unknown> = z
  .looseObject({
    trajectories: z.array(TrajectorySchema).default([]),
    exceptions: z.array(RolloutException).nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
    metrics: MetricValues.nullish(),
    logs: z.array(z.string()).nullish(),
  })
  .transform((group) => ({ ...group, exceptions: group.exceptions ?? [], metadata: group.metadata ?? {}, metrics: group.metrics ?? {}, logs: group.logs ?? [] }));

export const TrajectoryGroupsSchema = z.array(TrajectoryGroupSchema);
