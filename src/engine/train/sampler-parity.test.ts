import { describe, expect, it } from "vitest";
import { choiceTokens, runCore, startedOf } from "../../testing/engine.js";
import { bf16TestKernelBackends, type KernelBackend, testKernelBackends } from "../../testing/kernel-backends.js";
import { randomizeAdapter } from "../../testing/lora.js";
import { loadTinyModel, type TinyModelVariant } from "../../testing/models.js";
import { packedTestRow } from "../../testing/packed-rows.js";
import type { SampledToken } from "../api.js";
import type { Architecture } from "../checkpoint/model-config.js";
import { createLoraAdapter } from "../lora/init.js";
import { EngineCore } from "../runtime/engine-core.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "../runtime/options.js";
import { noConstraintBackend } from "../runtime/seams.js";
import { defaultSamplingParams } from "../sampling/params.js";
import { rlLossInputs } from "./loss-inputs.js";
import { LoraTrainer } from "./lora-trainer.js";

/**
 * The promise RL rests on: for every token the engine sampled, the trainer recomputes exactly the
 * logprob the engine returned (same weights, same adapter), bit for bit — whether the completion
 * was sampled alone, in a batch with others, in prefill chunks, after a prefix-cache hit, or with
 * a LoRA adapter — because the trainer's forward is the sampler's forward on the same kernels.
 * Under bf16 products (FLYWHEEL_FORWARD_PRECISION=bf16) too, with f32 weights (rounded copies) and
 * with a bf16 checkpoint (its weights packed for the bf16 products as loaded).
 */
const architectures: Architecture[] = ["llama", "qwen2", "qwen3"];
const cases: [Architecture, KernelBackend, TinyModelVariant][] = [
  ...architectures.flatMap((architecture) => [...testKernelBackends(), ...bf16TestKernelBackends()].map((backend): [Architecture, KernelBackend, TinyModelVariant] => [architecture, backend, {}])),
  ...bf16TestKernelBackends().map((backend): [Architecture, KernelBackend, TinyModelVariant] => ["qwen2", backend, { dtype: "bf16" }]),
];

describe.each(cases)("sampler/trainer logprob parity on %s, %s kernels, variant %o", (architecture, backend, variant) => {
  const model = loadTinyModel(architecture, variant, backend);
  const adapter = randomizeAdapter(createLoraAdapter(model.config, { seed: 5 }), 9);
  const trainer = new LoraTrainer(model.transformer, adapter);
  const prompt = Array.from({ length: 21 }, (_, i) => 5 + ((i * 37) % 300));

  async function sample(requests: { id: string; prompt: number[]; seed: number; adapter: boolean }[], options: Partial<SchedulerOptions>, warmPrefix?: number[]) {
    const core = new EngineCore({ model, scheduler: resolveSchedulerOptions(options), constraints: await noConstraintBackend(model), adapterLoader: () => adapter });
    if (warmPrefix) {
      // The prefix cache is per adapter: warm it for the adapted requests.
      core.submit({ requestId: "warm", promptTokenIds: warmPrefix, params: defaultSamplingParams({ temperature: 1, maxTokens: 1, seed: 1 }), adapter: { id: "a", dir: "unused" } });
      await runCore(core);
    }
    for (const request of requests) {
      core.submit({
        requestId: request.id,
        promptTokenIds: request.prompt,
        params: defaultSamplingParams({ temperature: 1, maxTokens: 14, ignoreEos: true, logprobs: 0, seed: request.seed }),
        ...(request.adapter ? { adapter: { id: "a", dir: "unused" } } : {}),
      });
    }
    return runCore(core);
  }

  /** Asserts the trainer's ℓ of each sampled token equals the engine's, as f64 values (so as bits). */
  function expectExact(requestPrompt: number[], tokens: SampledToken[], withAdapter: boolean, what: string) {
    const scored = trainer.sequenceLogprobs([...requestPrompt, ...tokens.map((token) => token.tokenId)], { adapter: withAdapter ? adapter : null }).logprobs;
    tokens.forEach((token, i) => expect(scored[requestPrompt.length - 1 + i], `${what}, token ${i}`).toBe(token.logprob));
  }

  it("alone, with and without the adapter", async () => {
    for (const withAdapter of [false, true]) {
      const results = await sample([{ id: "x", prompt, seed: 3, adapter: withAdapter }], {});
      expectExact(prompt, choiceTokens(results.get("x")!.events), withAdapter, `adapter ${withAdapter}`);
    }
  });

  it("in a batch mixing adapters, in prefill chunks of 5 tokens, after a prefix-cache hit, and re-scored as one packed RL row", async () => {
    const requests = [0, 1, 2, 3].map((i) => ({ id: `r${i}`, prompt, seed: 10 + i, adapter: i % 2 === 0 }));
    const batch = await sample(requests, { maxTokensPerStep: 5, maxRunningSequences: 4 });
    for (const request of requests) expectExact(prompt, choiceTokens(batch.get(request.id)!.events), request.adapter, `batched ${request.id}`);

    const longer = [...prompt, 7, 8, 9];
    const hit = await sample([{ id: "hit", prompt: longer, seed: 20, adapter: true }], {}, prompt);
    expect(startedOf(hit.get("hit")!.events)!.cachedTokens).toBeGreaterThan(0);
    expectExact(longer, choiceTokens(hit.get("hit")!.events), true, "after a prefix hit");

    // The RL path: the adapter's completions packed into one row after their shared prompt.
    const sampled = requests.filter((request) => request.adapter).map((request) => choiceTokens(batch.get(request.id)!.events));
    const row = packedTestRow(
      prompt,
      sampled.map((tokens) => ({ tokens: tokens.map((token) => token.tokenId), logprobs: tokens.map((token) => token.logprob), advantage: 1 })),
    );
    const inputs = rlLossInputs(row);
    const recomputed = trainer.logprobs(row);
    let compared = 0;
    for (let p = 0; p < inputs.mask.length; p++) {
      if (!inputs.mask[p]) continue;
      expect(recomputed[p], `packed position ${p}`).toBe(inputs.oldLogprobs[p]);
      compared++;
    }
    expect(compared).toBe(sampled.reduce((sum, tokens) => sum + tokens.length, 0));
  });
});
