import { describe, expect, it } from "vitest";
import { type TinyModelVariant, tinyModel } from "../../testing/models.js";
import { describeNative } from "../../testing/native.js";
import type { ProductPrecision } from "../kernels/types.js";
import { NativeKernels } from "../kernels/native/index.js";
import { createLoraAdapter } from "../lora/init.js";
import { loadModel } from "../model/load.js";
import { IGNORE, type SftRow } from "./sft-tokenize.js";
import { Trainer } from "./trainer.js";

describeNative("training with bf16 products (FLYWHEEL_FORWARD_PRECISION and FLYWHEEL_BACKWARD_PRECISION=bf16)", (addon) => {
  describe.runIf(addon.bf16Products)("on this CPU (AVX-512 BF16)", () => {
    const rows: SftRow[] = [0, 1, 2].map((row) => {
      const tokens = Int32Array.from({ length: 40 }, (_, i) => 3 + ((i * 17 + row * 101) % 250));
      return { tokens, labels: tokens.map((id, i) => (i >= 16 ? id : IGNORE)), numTrainableTokens: 24 };
    });

    /** Five SFT steps from the same start: the losses and gradient norms. */
    function train(target: "full" | "lora", backwardPrecision: ProductPrecision, forwardPrecision: ProductPrecision = "f32", variant: TinyModelVariant = {}) {
      const kernels = new NativeKernels(addon, { threads: 2, forwardPrecision, backwardPrecision });
      const model = loadModel(tinyModel("qwen2", variant).dir, { kernels });
      const trainer = new Trainer(model.transformer, target === "full" ? "full" : createLoraAdapter(model.config, { seed: 4 }));
      return Array.from({ length: 5 }, () => trainer.sftStep({ rows, learningRate: 1e-3 }));
    }

    it.each(["full", "lora"] as const)("%s steps with bf16 backward products track f32's: the same first loss, gradient norms within 0.2%, losses within 0.01%", (target) => {
      const [f32, bf16] = [train(target, "f32"), train(target, "bf16")];
      // The forward is f32 either way, so the first loss (before any update) is the same bits.
      expect(bf16[0]!.loss).toBe(f32[0]!.loss);
      for (const [i, step] of bf16.entries()) {
        expect(Math.abs(step.gradNorm / f32[i]!.gradNorm - 1)).toBeLessThan(2e-3);
        expect(Math.abs(step.loss / f32[i]!.loss - 1)).toBeLessThan(1e-4);
      }
      // Training still trains, and the rounding is real (the updates differ).
      expect(bf16[4]!.loss).toBeLessThan(bf16[0]!.loss);
      expect(bf16[1]!.loss).not.toBe(f32[1]!.loss);
    });

    // A bf16 checkpoint's weights are packed for the bf16 products as loaded; an f32 one's get copies.
    it.each([
      ["full", "f32"],
      ["lora", "f32"],
      ["full", "bf16"],
      ["lora", "bf16"],
    ] as const)("%s steps of a %s checkpoint with bf16 products forward and backward track f32's: losses within 0.1%, gradient norms within 0.5%", (target, dtype) => {
      const [f32, bf16] = [train(target, "f32", "f32", { dtype }), train(target, "bf16", "bf16", { dtype })];
      for (const [i, step] of bf16.entries()) {
        expect(Math.abs(step.gradNorm / f32[i]!.gradNorm - 1)).toBeLessThan(5e-3);
        expect(Math.abs(step.loss / f32[i]!.loss - 1)).toBeLessThan(1e-3);
      }
      // The forward's rounding is real: the loss before any update already differs.
      expect(bf16[0]!.loss).not.toBe(f32[0]!.loss);
      expect(bf16[4]!.loss).toBeLessThan(bf16[0]!.loss);
    });
  });
});
