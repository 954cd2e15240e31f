import { describe, expect, it } from "vitest";
import { klReferenceStep, resolveRlConfig, RL_CONFIG_DEFAULTS } from "./training-config.js";

describe("RL config resolution", () => {
  it("fills every §5.1 default, with ε depending on the loss", () => {
    expect(resolveRlConfig({})).toEqual({ ...RL_CONFIG_DEFAULTS, epsilon: 1, epsilon_high: 4 });
    expect(resolveRlConfig({ ppo: true })).toMatchObject({ loss_fn: "ppo", epsilon: 0.2, epsilon_high: 0.2 });
    expect(resolveRlConfig({ loss_fn: "cispo", epsilon: 0.5 })).toMatchObject({ epsilon: 0.5, epsilon_high: 4 });
    expect(resolveRlConfig({ scale_rewards: true, normalize_advantages: false }).scale_rewards).toBe(false);
    expect(resolveRlConfig({ learning_rate: null, advantage_balance: null }).learning_rate).toBe(5e-6);
  });

  it("finds the KL reference step from the step a job starts at", () => {
    const kl = (coef: number, reference: number | null, lag: number | null) => ({ kl_penalty_coef: coef, kl_penalty_reference_step: reference, kl_penalty_step_lag: lag });
    expect(klReferenceStep(kl(0, 3, null), 10)).toBeUndefined();
    expect(klReferenceStep(kl(0.1, 3, null), 10)).toBe(3);
    expect(klReferenceStep(kl(0.1, null, 4), 10)).toBe(6);
    expect(klReferenceStep(kl(0.1, null, 4), 2)).toBe(0);
    expect(klReferenceStep(kl(0.1, null, null), 10)).toBeNull();
  });
});
