import { describe, expect, it } from "vitest";
import { type GradientProblem, perTensorDirections, rlProblem, sftProblem, worstDirectionalError } from "../../../testing/gradient-check.js";
import { randomizeAdapter } from "../../../testing/lora.js";
import { loadTinyModel } from "../../../testing/models.js";
import { createLoraAdapter } from "../../lora/init.js";
import { ModelGradients, modelParameters } from "./model-gradients.js";
import { TrainingModel } from "./training-model.js";

const ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;

describe.each(ARCHITECTURES)("full-parameter gradients on %s", (architecture) => {
  const loaded = loadTinyModel(architecture);
  const model = new TrainingModel(loaded.transformer);

  function analytic(problem: GradientProblem, trainer = model): { gradients: ModelGradients; detached: Float64Array } {
    const scores = trainer.forward(problem.sequence, null, problem, true);
    const gradients = new ModelGradients(loaded.transformer);
    trainer.backward(problem.loss(scores.logprobs, scores.logprobs).gradient, gradients);
    return { gradients, detached: scores.logprobs };
  }

  function checkAgainstFiniteDifferences(problem: GradientProblem): void {
    const { gradients, detached } = analytic(problem);
    const parameters = gradients.values();
    // Every tensor (embedding, norms, projections, biases, lm_head) on its own, then all at once.
    // Each direction is scaled by its tensor's RMS, so a step is the same relative change for a
    // norm weight near 1 as for a projection of order 0.1: large enough that the f32 rounding of
    // the loss stays small, small enough that curvature does.
    const lossAt = () => problem.loss(model.forward(problem.sequence, null, problem).logprobs, detached).loss;
    const scales = parameters.map((tensor) => Math.sqrt(tensor.reduce((sum, value) => sum + value * value, 0) / tensor.length));
    const directions = perTensorDirections(parameters, 31).map((direction) => direction.map((tensor, i) => tensor.map((value) => value * scales[i]!)));
    const worstError = worstDirectionalError(parameters, gradients.tensors, directions, lossAt, 1e-2);
    expect(worstError).toBeLessThan(1e-3);
    for (const [i, tensor] of gradients.tensors.entries())
      expect(
        tensor.some((value) => Math.abs(value) > 1e-7),
        gradients.parameters[i]!.name,
      ).toBe(true);
  }

  it("match central differences for the SFT loss", () => {
    checkAgainstFiniteDifferences(sftProblem([12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250]));
  });

  it("match central differences for the RL loss on a packed row", () => {
    checkAgainstFiniteDifferences(rlProblem(model, null));
  });

  it("are the same when activations or logits are recomputed instead of kept, and close when lm_head runs in chunks", () => {
    const problem = rlProblem(model, null);
    const kept = analytic(problem).gradients;
    const recomputed = analytic(problem, new TrainingModel(loaded.transformer, { activationBudgetBytes: 0 })).gradients;
    expect(recomputed.tensors.every((tensor, i) => tensor.every((value, j) => value === kept.tensors[i]![j]))).toBe(true);
    // Chunks of lm_head rows add their weight gradients separately: only float rounding differs.
    const chunked = analytic(problem, new TrainingModel(loaded.transformer, { logitsChunkRows: 3 })).gradients;
    let worst = 0;
    chunked.tensors.forEach((tensor, i) => tensor.forEach((value, j) => (worst = Math.max(worst, Math.abs(value - kept.tensors[i]![j]!)))));
    expect(worst).toBeLessThan(1e-6);
    // Chunks' logits computed again in the backward are the very ones the forward computed.
    const rechunked = analytic(problem, new TrainingModel(loaded.transformer, { logitsChunkRows: 3, logitsHoldBytes: 0 })).gradients;
    expect(rechunked.tensors.every((tensor, i) => tensor.every((value, j) => value === chunked.tensors[i]![j]))).toBe(true);
  });

  it("names every tensor of the checkpoint once, a tied lm_head as the embedding", () => {
    const names = modelParameters(loaded.transformer).map((parameter) => parameter.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.includes("lm_head.weight")).toBe(!loaded.config.tieWordEmbeddings);
    expect(names.some((name) => name.endsWith("q_proj.bias"))).toBe(architecture === "qwen2");
    expect(names.some((name) => name.endsWith("q_norm.weight"))).toBe(architecture === "qwen3");
    const count = modelParameters(loaded.transformer).reduce((sum, parameter) => sum + parameter.values.length, 0);
    expect(count).toBeGreaterThan(loaded.config.vocabSize * loaded.config.hiddenSize);
  });
});

describe("full-parameter backward", () => {
  const loaded = loadTinyModel("qwen2");
  const model = new TrainingModel(loaded.transformer);
  const problem = sftProblem([12, 300, 45, 99, 7, 560]);

  it("refuses a forward that ran with an adapter, and gradients of another model", () => {
    const adapter = randomizeAdapter(createLoraAdapter(loaded.config, { seed: 1 }), 2);
    model.forward(problem.sequence, adapter, problem, true);
    expect(() => model.backward(new Float64Array(problem.mask.length), new ModelGradients(loaded.transformer))).toThrow(/without adapter/);
    const other = loadTinyModel("qwen2", { seed: 5 });
    model.forward(problem.sequence, null, problem, true);
    expect(() => model.backward(new Float64Array(problem.mask.length), new ModelGradients(other.transformer))).toThrow(/another model/);
  });

  it("adds up over calls until zeroed", () => {
    const gradients = new ModelGradients(loaded.transformer);
    const once = () => {
      const scores = model.forward(problem.sequence, null, problem, true);
      model.backward(problem.loss(scores.logprobs, scores.logprobs).gradient, gradients);
    };
    once();
    const single = gradients.tensors.map((tensor) => tensor.slice());
    once();
    gradients.tensors.forEach((tensor, i) => tensor.forEach((value, j) => expect(value).toBeCloseTo(2 * single[i]![j]!, 6)));
    gradients.zero();
    expect(gradients.tensors.every((tensor) => tensor.every((value) => value === 0))).toBe(true);
    expect(gradients.get("model.norm.weight")).toBe(gradients.tensors[gradients.tensors.length - 2]);
  });
});
