import type { Store } from "../db.js";
import type { CallHeader, CallHeaderLookup } from "./call-lookup.js";
import { type CallStatsRequest, type CallStatsResult, callStats } from "./calls/stats.js";
import { TurnBudget } from "../event-loop-turns.js";
import { countCalls, MAX_FILTER_LENGTH, queryCallRows, totalStorageOfMatchedTraces } from "./calls/query.js";
import { type CallField, selectedFields, toCallSchema } from "./calls/records.js";
import type { CallSchema, CallsFilter, CallsQuery, CallWrite, SendableCall } from "./calls/types.js";
import { type AggregatedUsage, type UsageCall, usageWithDescendants } from "./calls/usage.js";
import { GroupCommit } from "./calls/group-commit.js";
import { candidateLimit, leafCandidates } from "./calls/leaf-query.js";
import { textCandidates } from "./calls/text-query.js";
import { rangeCandidates, rangeSample } from "./calls/range-query.js";
import { TrigramSamples } from "./calls/trigram-sample.js";
import { feedbackCandidates } from "./calls/feedback-query.js";
import { callWriteStatements, deleteCalls, runWriteStatements, updateDisplayName } from "./calls/write.js";
import { type CostInput, type CostQuery, candidatePrices, costsOf, createCosts, purgeCosts, queryCosts } from "./costs.js";
import { type Feedback, type FeedbackQuery, feedbackForCalls, feedbackInRange, insertFeedback, purgeFeedback, queryFeedback, replaceFeedback } from "./feedback.js";
import { PlannerStatistics } from "./planner-statistics.js";
import type { Operation } from "./query/ast.js";
import { QueryError, TooLargeError } from "./query/errors.js";
import { traceSql, type TraceSql } from "../dialect.js";
import { type TraceDb, traceDb } from "./call-tables.js";
import { queryThreads, type ThreadSchema, type ThreadsQuery } from "./threads.js";

export interface CallsReadOptions {
  includeCosts?: boolean;
  includeFeedback?: boolean;
}

export interface UsageResult {
  call_usage: Record<string, Record<string, AggregatedUsage>>;
  unfinished_call_ids: string[];
}

/**
 * The trace store for calls, feedback and costs. Routes depend on this interface only, so an
 * implementation over another database (ClickHouse at very large scale) can replace the SQL one.
 */
export interface TraceCallStore extends CallHeaderLookup {
  writeCalls(writes: CallWrite[]): Promise<void>;
  updateDisplayName(projectId: string, callId: string, displayName: string): Promise<void>;
  deleteCalls(projectId: string, callIds: string[]): Promise<number>;
  queryCalls(q: CallsQuery, options?: CallsReadOptions): AsyncGenerator<CallSchema[]>;
  /** The same calls, for an answer: inputs, output and attributes as their stored JSON text where they can be. */
  queryCallsToSend(q: CallsQuery, options?: CallsReadOptions): AsyncGenerator<SendableCall[]>;
  countCalls(q: CallsQuery, limit?: number): Promise<{ count: number; hasMore: boolean }>;
  totalStorageSize(q: CallsQuery): Promise<number>;
  callsUsage(req: { projectId: string; callIds: string[]; includeCosts: boolean; limit: number }): Promise<UsageResult>;
  traceUsage(req: { projectId: string; filter?: CallsFilter | null; query?: Operation | null; includeCosts: boolean; limit: number }): Promise<UsageResult>;
  callStats(req: CallStatsRequest): Promise<CallStatsResult>;
  queryThreads(q: ThreadsQuery): Promise<ThreadSchema[]>;

  insertFeedback(rows: Feedback[]): Promise<Feedback[]>;
  replaceFeedback(projectId: string, oldId: string, replacement: Feedback): Promise<Feedback>;
  purgeFeedback(projectId: string, ids: string[]): Promise<void>;
  queryFeedback(q: FeedbackQuery): Promise<{ result: Record<string, unknown>[]; total_count: number }>;
  feedbackInRange(q: Parameters<typeof feedbackInRange>[1]): ReturnType<typeof feedbackInRange>;

  createCosts(projectId: string, costs: Record<string, CostInput>, createdBy: string | null): Promise<[string, string][]>;
  queryCosts(q: CostQuery): Promise<Record<string, unknown>[]>;
  purgeCosts(projectId: string, ids: string[]): Promise<void>;
}

export interface TraceCallStoreOptions {
  /** Narrow selective JSON filters through the leaf index (default true; tests compare with false). */
  useLeafIndex?: boolean;
  /** Narrow `$contains` searches through the text index (default true; tests compare with false). */
  useTextIndex?: boolean;
  /** Narrow filters on a call's feedback to the calls that have feedback of that type (default true). */
  useFeedbackIndex?: boolean;
  /** Narrow selective range filters on JSON paths through the range index (default true; tests compare with false). */
  useRangeIndex?: boolean;
  /** On PostgreSQL, look a long needle up by its rarest part (`calls/trigram-sample.ts`; default true). */
  searchRarestPart?: boolean;
}

const MAX_TRACES_PER_BATCH = 1000;

export class SqlTraceCallStore implements TraceCallStore {
  private readonly db: TraceDb;
  private readonly sql: TraceSql;
  private readonly statistics: PlannerStatistics;
  private readonly commits: GroupCommit;
  private readonly options: TraceCallStoreOptions;
  private readonly trigramSamples: TrigramSamples | undefined;

  constructor(
    private readonly store: Store,
    options: TraceCallStoreOptions = {},
  ) {
    this.db = traceDb(store.db);
    this.sql = traceSql(store.dialect);
    this.statistics = new PlannerStatistics(store);
    this.commits = new GroupCommit((groups) => runWriteStatements(this.db, store.walCommit, groups));
    this.trigramSamples = store.dialect === "postgres" && options.searchRarestPart !== false ? new TrigramSamples(this.db) : undefined;
    this.options = { useLeafIndex: true, useTextIndex: true, useFeedbackIndex: true, useRangeIndex: true, ...options };
  }

  async writeCalls(writes: CallWrite[]): Promise<void> {
    await this.commits.write(callWriteStatements(this.store.dialect, writes));
    await this.statistics.afterWrite(writes.length);
  }

  updateDisplayName(projectId: string, callId: string, displayName: string): Promise<void> {
    return updateDisplayName(this.db, this.store.dialect, projectId, callId, displayName);
  }

  deleteCalls(projectId: string, callIds: string[]): Promise<number> {
    return deleteCalls(this.db, this.store.dialect, projectId, callIds);
  }

  queryCalls(q: CallsQuery, options: CallsReadOptions = {}): AsyncGenerator<CallSchema[]> {
    return this.readCalls(q, options, (row, fields) => toCallSchema(row, fields));
  }

  queryCallsToSend(q: CallsQuery, options: CallsReadOptions = {}): AsyncGenerator<SendableCall[]> {
    return this.readCalls(q, options, (row, fields) => toCallSchema(row, fields, true));
  }

  private async *readCalls<C extends SendableCall>(q: CallsQuery, options: CallsReadOptions, convert: (row: Record<string, unknown>, fields: CallField[]) => C): AsyncGenerator<C[]> {
    const fields: CallField[] = selectedFields(q.columns, options.includeCosts === true);
    await this.statistics.beforeRead();
    // Converting a page (parsing each call's JSON) hands the event loop back every few ms.
    const turns = new TurnBudget();
    for await (const rows of queryCallRows(this.db, this.sql, q, fields, { candidates: await this.candidates(q) })) {
      const calls: C[] = [];
      for (const row of rows) {
        await turns.spend();
        calls.push(convert(row, fields));
      }
      if (options.includeCosts) await this.attachCosts(q.projectId, calls);
      if (options.includeFeedback) await this.attachFeedback(q.projectId, calls);
      yield calls;
    }
  }

  /** Headers of the live calls among `callIds` (annotation queue items cache them). */
  async findCalls(projectId: string, callIds: string[]): Promise<CallHeader[]> {
    const headers: CallHeader[] = [];
    for (let start = 0; start < callIds.length; start += MAX_FILTER_LENGTH) {
      const filter = { call_ids: callIds.slice(start, start + MAX_FILTER_LENGTH) };
      for await (const calls of this.queryCalls({ projectId, filter, columns: ["ended_at"], sortBy: [] })) {
        for (const call of calls) headers.push({ id: call.id, traceId: call.trace_id, opName: call.op_name, startedAt: call.started_at, endedAt: call.ended_at ?? null });
      }
    }
    return headers;
  }

  async countCalls(q: CallsQuery, limit?: number): Promise<{ count: number; hasMore: boolean }> {
    await this.statistics.beforeRead();
    const candidates = await this.candidates(q, limit);
    if (!candidates && limit !== undefined && q.query && this.options.useRangeIndex) {
      // A range too common to take whole: any limit + 1 of its calls that match prove "limit+".
      const sample = await rangeSample(this.db, q.projectId, q.query, limit + 1);
      if (sample) {
        const counted = await countCalls(this.db, this.sql, q, limit, sample);
        if (counted.hasMore) return counted;
      }
    }
    return countCalls(this.db, this.sql, q, limit, candidates);
  }

  async totalStorageSize(q: CallsQuery): Promise<number> {
    return totalStorageOfMatchedTraces(this.db, this.sql, q, await this.candidates(q, undefined));
  }

  /**
   * The only calls a query can match, when an index finds few: the leaf index (a selective JSON
   * equality), the range index (a selective range on a JSON path), the feedback table (a filter on the call's feedback) or the text index (a
   * `$contains` search); the fewest of them. Undefined otherwise (the query then reads the calls in
   * its index order).
   */
  private async candidates(q: CallsQuery, limit = q.limit): Promise<string[] | undefined> {
    if (!q.query) return undefined;
    const query = q.query;
    const max = candidateLimit(limit === null || limit === undefined ? limit : limit + (q.offset ?? 0));
    const sources: [boolean | undefined, (max: number) => Promise<string[] | undefined>][] = [
      [this.options.useLeafIndex, (most) => leafCandidates(this.db, this.store.dialect, q.projectId, query, most)],
      [this.options.useRangeIndex, (most) => rangeCandidates(this.db, q.projectId, query, most)],
      [this.options.useFeedbackIndex, (most) => feedbackCandidates(this.db, q.projectId, query, most)],
      [this.options.useTextIndex, (most) => textCandidates(this.db, this.store.dialect, q.projectId, query, most, this.trigramSamples)],
    ];
    let best: string[] | undefined;
    for (const [enabled, find] of sources) {
      if (!enabled) continue;
      // Each later source only helps if it finds fewer.
      const found = await find(best ? best.length - 1 : max);
      if (found && (!best || found.length < best.length)) best = found;
      if (best && best.length === 0) break;
    }
    return best;
  }

  /**
   * Usage of root calls with all their descendants (`POST /calls/usage`): whole traces are loaded in
   * batches of at most `limit` calls; a batch over the limit is split, and a single trace over it
   * is refused with 413.
   */
  async callsUsage(req: { projectId: string; callIds: string[]; includeCosts: boolean; limit: number }): Promise<UsageResult> {
    if (req.limit < 1) throw new QueryError("Usage aggregation limit must be positive");
    const callUsage: Record<string, Record<string, AggregatedUsage>> = Object.fromEntries(req.callIds.map((id) => [id, {}]));
    const unfinished = new Set<string>();
    if (req.callIds.length === 0) return { call_usage: callUsage, unfinished_call_ids: [] };
    const traceIds = new Set<string>();
    for await (const calls of this.queryCalls({ projectId: req.projectId, filter: { call_ids: req.callIds }, columns: ["trace_id"], sortBy: [] })) {
      for (const call of calls) traceIds.add(call.trace_id);
    }
    const sorted = [...traceIds].sort();
    const pending: string[][] = [];
    for (let index = 0; index < sorted.length; index += MAX_TRACES_PER_BATCH) pending.push(sorted.slice(index, index + MAX_TRACES_PER_BATCH));
    while (pending.length > 0) {
      const batch = pending.pop()!;
      const calls = await this.usageCalls({ projectId: req.projectId, filter: { trace_ids: batch } }, req.includeCosts, req.limit);
      if (!calls) {
        if (batch.length === 1) throw new TooLargeError(`Cannot compute complete usage: a single trace exceeds the ${req.limit}-call aggregation limit. Increase limit and retry.`);
        pending.push(batch.slice(0, batch.length / 2), batch.slice(batch.length / 2));
        continue;
      }
      const usage = usageWithDescendants(calls, req.includeCosts);
      for (const id of req.callIds) if (usage[id]) callUsage[id] = usage[id]!;
      for (const call of calls) if (!call.ended) unfinished.add(call.id);
    }
    return { call_usage: callUsage, unfinished_call_ids: [...unfinished].sort() };
  }

  /** Usage of every matched call with its descendants among the matched calls (`POST /trace/usage`). */
  async traceUsage(req: { projectId: string; filter?: CallsFilter | null; query?: Operation | null; includeCosts: boolean; limit: number }): Promise<UsageResult> {
    if (req.limit < 1) throw new QueryError("Usage aggregation limit must be positive");
    const calls = await this.usageCalls({ projectId: req.projectId, filter: req.filter, query: req.query }, req.includeCosts, req.limit);
    if (!calls) throw new TooLargeError(`Cannot compute complete usage: more than ${req.limit} calls match. Increase limit and retry.`);
    return {
      call_usage: usageWithDescendants(calls, req.includeCosts),
      unfinished_call_ids: calls
        .filter((call) => !call.ended)
        .map((call) => call.id)
        .sort(),
    };
  }

  /** The matching calls' usage inputs, or undefined when more than `limit` match. */
  private async usageCalls(q: CallsQuery, includeCosts: boolean, limit: number): Promise<(UsageCall & { ended: boolean })[] | undefined> {
    const out: (UsageCall & { ended: boolean })[] = [];
    const query: CallsQuery = { ...q, columns: ["id", "parent_id", "summary", "ended_at"], limit: limit + 1, sortBy: [] };
    for await (const calls of this.queryCalls(query, { includeCosts })) {
      for (const call of calls) out.push({ id: call.id, parent_id: call.parent_id, summary: call.summary, ended: call.ended_at !== null && call.ended_at !== undefined });
    }
    return out.length > limit ? undefined : out;
  }

  callStats(req: CallStatsRequest): Promise<CallStatsResult> {
    return callStats(this.db, this.sql, req);
  }

  queryThreads(q: ThreadsQuery): Promise<ThreadSchema[]> {
    return queryThreads(this.db, q);
  }

  insertFeedback(rows: Feedback[]): Promise<Feedback[]> {
    return insertFeedback(this.db, rows);
  }

  replaceFeedback(projectId: string, oldId: string, replacement: Feedback): Promise<Feedback> {
    return replaceFeedback(this.db, projectId, oldId, replacement);
  }

  purgeFeedback(projectId: string, ids: string[]): Promise<void> {
    return purgeFeedback(this.db, projectId, ids);
  }

  queryFeedback(q: FeedbackQuery): Promise<{ result: Record<string, unknown>[]; total_count: number }> {
    return queryFeedback(this.db, this.store.dialect, q);
  }

  feedbackInRange(q: Parameters<typeof feedbackInRange>[1]): ReturnType<typeof feedbackInRange> {
    return feedbackInRange(this.db, q);
  }

  createCosts(projectId: string, costs: Record<string, CostInput>, createdBy: string | null): Promise<[string, string][]> {
    return createCosts(this.db, projectId, costs, createdBy);
  }

  queryCosts(q: CostQuery): Promise<Record<string, unknown>[]> {
    return queryCosts(this.db, this.store.dialect, q);
  }

  purgeCosts(projectId: string, ids: string[]): Promise<void> {
    return purgeCosts(this.db, projectId, ids);
  }

  /** Adds `summary.weave.costs` to the calls that have a price for some LLM of their usage. */
  private async attachCosts(projectId: string, calls: SendableCall[]): Promise<void> {
    const models = new Set<string>();
    for (const call of calls) {
      const usage = call.summary?.usage;
      if (usage && typeof usage === "object") for (const model of Object.keys(usage)) models.add(model);
    }
    if (models.size === 0) return;
    const prices = await candidatePrices(this.db, projectId, [...models]);
    if (prices.length === 0) return;
    for (const call of calls) {
      const costs = costsOf(call.summary?.usage, call.started_at, prices);
      if (costs && call.summary) (call.summary.weave as Record<string, unknown>).costs = costs;
    }
  }

  /** Adds `summary.weave.feedback`: the feedback whose weave_ref is the call. */
  private async attachFeedback(projectId: string, calls: SendableCall[]): Promise<void> {
    const byCall = await feedbackForCalls(
      this.db,
      projectId,
      calls.map((call) => call.id),
    );
    for (const call of calls) {
      call.summary ??= {};
      const weave = (call.summary.weave ??= {}) as Record<string, unknown>;
      weave.feedback = (byCall.get(call.id) ?? []).map((row) => ({
        id: row.id,
        feedback_type: row.feedback_type,
        weave_ref: row.weave_ref,
        payload: row.payload,
        creator: row.creator,
        created_at: row.created_at,
        wb_user_id: row.wb_user_id,
        runnable_ref: row.runnable_ref,
        call_ref: row.call_ref,
        trigger_ref: row.trigger_ref,
        annotation_ref: row.annotation_ref,
      }));
    }
  }
}
