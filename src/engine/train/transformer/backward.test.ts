import { describe, expect, it, vi } from "vitest";
import { type GradientProblem, perTensorDirections, rlProblem, sftProblem, worstDirectionalError } from "../../../testing/gradient-check.js";
import { randomizeAdapter } from "../../../testing/lora.js";
import { loadTinyModel } from "../../../testing/models.js";
import { createLoraAdapter } from "../../lora/init.js";
import { LayerActivations } from "../../model/layer-activations.js";
import { LoraGradients } from "./lora-gradients.js";
import { TrainingModel } from "./training-model.js";

const ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;

describe.each(ARCHITECTURES)("LoRA gradients on %s", (architecture) => {
  const loaded = loadTinyModel(architecture);
  const model = new TrainingModel(loaded.transformer);
  const adapter = randomizeAdapter(createLoraAdapter(loaded.config, { seed: 11 }), 12);
  const parameters = adapter.parameters();

  function analytic(problem: GradientProblem): { gradients: LoraGradients; detached: Float64Array } {
    const scores = model.forward(problem.sequence, adapter, problem, true);
    const { gradient } = problem.loss(scores.logprobs, scores.logprobs);
    const gradients = new LoraGradients(adapter);
    model.backward(gradient, gradients);
    return { gradients, detached: scores.logprobs };
  }

  function checkAgainstFiniteDifferences(problem: GradientProblem): void {
    const { gradients, detached } = analytic(problem);
    // Every factor of every module on its own, then all parameters at once.
    const lossAt = () => problem.loss(model.forward(problem.sequence, adapter, problem).logprobs, detached).loss;
    expect(worstDirectionalError(parameters, gradients.tensors, perTensorDirections(parameters, 21), lossAt)).toBeLessThan(1e-3);
    // Not vacuous: every module's factors receive a gradient.
    for (const tensor of gradients.tensors) expect(tensor.some((value) => Math.abs(value) > 1e-6)).toBe(true);
  }

  it("match central differences for the SFT loss", () => {
    checkAgainstFiniteDifferences(sftProblem([12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250]));
  });

  it("match central differences for the RL loss on a packed row", () => {
    checkAgainstFiniteDifferences(rlProblem(model, adapter));
  });

  it("are the same when some or all layers' activations are recomputed instead of kept", () => {
    const problem = rlProblem(model, adapter);
    const kept = analytic(problem).gradients;
    const { config } = loaded;
    const sizes = { hidden: config.hiddenSize, queries: config.numHeads * config.headDim, keyValues: config.numKvHeads * config.headDim, intermediate: config.intermediateSize };
    const layerBytes = problem.sequence.length * LayerActivations.floatsPerRow(sizes, adapter.rank) * 4;
    // No layer kept, then only the first (the budget holds one and a half layers); the LM head's
    // logits in chunks of 3 rows, kept from the forward or computed again in the backward.
    for (const [activationBudgetBytes, logitsHoldBytes] of [
      [0, 0],
      [1.5 * layerBytes, undefined],
    ]) {
      const recomputing = new TrainingModel(loaded.transformer, { activationBudgetBytes, logitsChunkRows: 3, logitsHoldBytes });
      const scores = recomputing.forward(problem.sequence, adapter, problem, true);
      const gradients = new LoraGradients(adapter);
      recomputing.backward(problem.loss(scores.logprobs, scores.logprobs).gradient, gradients);
      gradients.tensors.forEach((tensor, i) => expect(tensor).toEqual(kept.tensors[i]));
    }
  });

  it("skip the first layer's input gradient, which nothing reads while the embeddings are frozen", () => {
    const linearBackward = vi.spyOn(loaded.transformer.kernels, "linearBackward");
    try {
      analytic(sftProblem([12, 300, 45, 99, 7, 560, 201, 18]));
      // The LM head's, then seven per layer, less q, k and v's in the first.
      expect(linearBackward).toHaveBeenCalledTimes(1 + 7 * loaded.config.numLayers - 3);
    } finally {
      linearBackward.mockRestore();
    }
  });
});
