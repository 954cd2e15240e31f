import OpenAI from "openai";
import { CursorPage } from "openai/core/pagination";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { testDialects } from "../../testing/stores.js";
import { flatGroups, varyingGroups } from "../../testing/training.js";

interface JobEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * ART's serverless client, step by step (docs/api/training.md#job-events,
 * docs/api/training.md#art-client-flow): it subclasses the OpenAI SDK's client, so the real `openai` package
 * drives the HTTP here, with its cursor pages.
 */
async function artTrain(client: OpenAI, modelId: string, groups: unknown[], pageLimit?: number) {
  const job = await client.post<{ id: string }>("/preview/training-jobs", { body: { model_id: modelId, trajectory_groups: groups, experimental_config: { learning_rate: 5e-6 } } });
  let after: string | undefined;
  let numSequences: number | undefined;
  const seen: string[] = [];
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // ART sleeps 1 s
    const query = { ...(after ? { after } : {}), ...(pageLimit ? { limit: pageLimit } : {}) };
    for await (const event of client.getAPIList<JobEvent, CursorPage<JobEvent>>(`/preview/training-jobs/${job.id}/events`, CursorPage<JobEvent>, { query })) {
      seen.push(event.type);
      if (event.type === "training_started") {
        numSequences = event.data.num_sequences as number; // a KeyError in ART if missing
        continue; // `after` is not advanced past training_started
      }
      if (event.type === "gradient_step") {
        if (numSequences === undefined) throw new Error("gradient_step before training_started");
        for (const value of Object.values(event.data)) if (typeof value !== "number") throw new Error("non-numeric metric");
      }
      if (event.type === "training_ended") {
        const latest = await client.get<{ data: { step: number }[] }>(`/preview/models/${modelId}/checkpoints`, { query: { limit: 1, order: "desc" } });
        return { jobId: job.id, seen, numSequences, step: latest.data[0]?.step ?? 0 };
      }
      if (event.type === "training_failed") throw new Error(`Training job failed: ${String(event.data.error_message ?? "Training failed with an unknown error")}`);
      after = event.id;
    }
  }
}

describe.each(testDialects)("ART's serverless client flow on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  const connect = async (stepDelayMs = 0) => {
    t = await startTestApp(dialect, { worker: { stepDelayMs } });
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    return new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
  };

  it("registers, trains steps, re-reads training_started until a later event, and reads the new step", async () => {
    const client = await connect(400);
    const model = await client.post<{ id: string; entity: string }>("/preview/models", { body: { entity: null, project: "p", name: "agent-001", base_model: "test/base", return_existing: true } });
    expect(model.entity).toBe("alice");
    const initial = await client.get<{ data: unknown[] }>(`/preview/models/${model.id}/checkpoints`, { query: { limit: 1, order: "desc" } });
    expect(initial.data).toEqual([]); // ART's _get_step reads 0

    const first = await artTrain(client, model.id, flatGroups());
    expect(first.step).toBe(1);
    expect(first.numSequences).toBe(0);
    // While the job ran, every poll delivered training_started again; it ended with training_ended.
    expect(first.seen.filter((type) => type === "training_started").length).toBeGreaterThanOrEqual(2);
    expect(first.seen.at(-1)).toBe("training_ended");
    expect(new Set(first.seen)).toEqual(new Set(["training_started", "training_ended"]));

    const second = await artTrain(client, model.id, flatGroups(), 1);
    expect(second.step).toBe(2);
  });

  it("walks every page with the SDK's auto-pagination and stops at has_more false", async () => {
    const client = await connect();
    const model = await client.post<{ id: string }>("/preview/models", { body: { project: "p", name: "pages", base_model: "test/base" } });
    const { jobId } = await artTrain(client, model.id, flatGroups());
    const pages: string[][] = [];
    let page = await client.getAPIList<JobEvent, CursorPage<JobEvent>>(`/preview/training-jobs/${jobId}/events`, CursorPage<JobEvent>, { query: { limit: 1 } });
    for (;;) {
      pages.push(page.data.map((event) => event.type));
      if (!page.hasNextPage()) break;
      page = await page.getNextPage();
    }
    expect(pages).toEqual([["training_started"], ["training_ended"]]);
  });

  it("surfaces training_failed as the client's exception", async () => {
    const client = await connect();
    const model = await client.post<{ id: string }>("/preview/models", { body: { project: "p", name: "fails", base_model: "test/base" } });
    await expect(artTrain(client, model.id, varyingGroups())).rejects.toThrow(/^Training job failed: .*no trainer installed/);
  });
});
