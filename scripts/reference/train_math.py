"""Independent reference numbers for the trainer-math tests (src/engine/train/*.test.ts).

A plain numpy re-statement of the RL math (docs/api/training.md#advantages, docs/api/training.md#packing,
docs/api/training.md#rl-loss, docs/api/training.md#optimizer-steps, docs/api/training.md#reward-std-lr) and
of SFT (docs/api/training.md#sft), written from the described contract, not from the TypeScript code.
Gradients of the RL loss are central finite differences of the loss with the stop-gradient values
frozen at the evaluation point. Run: python3 scripts/reference/train_math.py
"""
import json
import math

import numpy as np

NAN = float("nan")

# One row in prediction layout: two results (group 5: three trained tokens, one with no old
# logprob; group 6: two trained tokens).
MASK = np.array([0, 1, 1, 1, 0, 1, 1, 0], dtype=float)
GROUP = np.array([0, 5, 5, 5, 0, 6, 6, 0])
OLD = np.array([NAN, -1.2, -0.7, NAN, NAN, -2.0, -0.3, NAN])
NEW = np.array([-0.5, -1.0, -0.9, -0.4, -3.0, -1.5, -0.35, -0.2])
ADV = np.array([0, 1.3, 1.3, 1.3, 0, -0.8, -0.8, 0])
W = np.array([0, 1.1, 1.1, 1.1, 0, 0.85, 0.85, 0])
ENT = np.array([2.0, 1.5, 0.7, 0.9, 3.0, 1.2, 0.4, 2.2])
REF = np.array([-0.6, -1.1, -1.0, -0.2, -2.5, -1.9, -0.5, -0.1])
ORIG = np.array([NAN, -1.25, -0.6, NAN, NAN, -2.2, -0.3, NAN])


def loss(new, frozen, opt, old_in=OLD, orig=None):
    m = MASK
    d = m.sum() + 1e-18
    old = np.where(np.isnan(old_in), frozen, old_in)

    def ratios(lp):
        delta = lp - old
        r = np.exp(delta)
        s = np.ones_like(r)
        for g in set(GROUP[m == 1]):
            sel = (GROUP == g) & (m == 1)
            s[sel] = math.exp(delta[sel].mean())
        level = opt.get("level", "token")
        rho = {"token": r, "sequence": s, "average": (r + s) / 2, "geometric_average": np.sqrt(r) * np.sqrt(s)}[level]
        if opt.get("cap"):
            rho = np.minimum(rho, opt["cap"])
        if opt.get("mask_prob_ratio"):
            rho = np.where((rho > 1 - opt["eps"]) & (rho < 1 + opt["eps_high"]), rho, 0.0)
        return rho

    rho = ratios(new)
    rho_sg = ratios(frozen)
    a = ADV.copy()
    if opt.get("tau"):
        a = a - opt["tau"] * (frozen - old)
    kl_mean = None
    if opt.get("beta"):
        src = frozen if opt["kl_source"] == "current_learner" else old
        k = (src - REF) * m
        kl_mean = k.sum() / d
        a = a + opt["beta"] * (kl_mean - k) * m
    lo, hi = 1 - opt["eps"], 1 + opt["eps_high"]
    if opt["ppo"]:
        per = -np.minimum(rho * a, np.clip(rho, lo, hi) * a)
    else:
        per = -np.clip(rho_sg, lo, hi) * a * new
    if opt.get("tis"):
        if orig is not None:
            o = np.where(np.isnan(orig), frozen, orig)
            q = np.exp(old - o)
        else:
            q = rho_sg
        per = per * np.minimum(q, opt["tis"])
    per = np.where(m == 1, per, 0.0)
    return float((per * W).sum() / d), kl_mean


def loss_and_grad(opt, old_in=OLD, orig=None):
    value, kl = loss(NEW, NEW, opt, old_in, orig)
    h = 1e-6
    grad = []
    for t in range(len(NEW)):
        up, down = NEW.copy(), NEW.copy()
        up[t] += h
        down[t] -= h
        grad.append((loss(up, NEW, opt, old_in, orig)[0] - loss(down, NEW, opt, old_in, orig)[0]) / (2 * h))
    return {"loss": value, "grad": [round(g, 10) for g in grad], "kl": kl}


PPO = {"ppo": True, "eps": 0.2, "eps_high": 0.2}
CISPO = {"ppo": False, "eps": 1.0, "eps_high": 4.0}
rl_cases = {
    "cispo_token": CISPO,
    "cispo_sequence": {**CISPO, "level": "sequence"},
    "ppo_token": PPO,
    "ppo_sequence": {**PPO, "level": "sequence"},
    "ppo_average": {**PPO, "level": "average"},
    "ppo_geometric": {**PPO, "level": "geometric_average"},
    "ppo_cap": {**PPO, "cap": 1.1},
    "ppo_mask": {**PPO, "mask_prob_ratio": True},
    "cispo_tau": {**CISPO, "tau": 0.5},
    "ppo_kl_current": {**PPO, "beta": 0.3, "kl_source": "current_learner"},
    "cispo_kl_sample": {**CISPO, "beta": 0.3, "kl_source": "sample"},
    "ppo_tis": {**PPO, "tis": 1.05},
}
out = {name: loss_and_grad(opt) for name, opt in rl_cases.items()}
out["cispo_tis_original"] = loss_and_grad({**CISPO, "tis": 1.05}, old_in=np.where(MASK == 1, np.array([0, -1.1, -0.8, -0.5, 0, -1.9, -0.32, 0]), NAN), orig=ORIG)
out["entropy"] = float((ENT * W * MASK).sum() / (MASK.sum() + 1e-18))
sel = (MASK == 1) & ~np.isnan(OLD)
out["probs_corr"] = float(np.corrcoef(np.exp(OLD[sel]), np.exp(NEW[sel]))[0, 1])

# Advantages (docs/api/training.md#advantages) and batch normalisation (docs/api/training.md#packing).
def advantages(rewards, scale):
    r = np.array(rewards, dtype=float)
    a = r - r.mean()
    return (a / (r.std() + 1e-6) if scale else a).tolist()

out["advantages_scaled"] = advantages([1.0, 0.0, 0.5, 0.25], True)
out["advantages_unscaled"] = advantages([1.0, 0.0, 0.5, 0.25], False)

def normalize(mask, adv, w, balance):
    mask = np.array(mask, dtype=bool)
    adv = np.where(mask, np.array(adv, dtype=float), 0.0)
    w = np.where(mask, np.array(w, dtype=float), 0.0)
    w[mask] /= w[mask].mean()
    if balance > 0:
        adv = np.where(adv > 0, adv, adv * (1 - balance))
    elif balance < 0:
        adv = np.where(adv < 0, adv, adv * (1 + balance))
    adv[mask] /= (np.abs(adv[mask]) * w[mask]).mean()
    return adv.tolist(), w.tolist()

NORM_MASK = [0, 1, 1, 0, 1, 1, 1]
NORM_ADV = [2.0, 2.0, 2.0, -1.0, -1.0, -1.0, -1.0]
NORM_W = [0.5, 0.5, 0.5, 1 / 3, 1 / 3, 1 / 3, 1 / 3]
for b in (0.0, 0.5, -0.25):
    out[f"normalize_{b}"] = normalize(NORM_MASK, NORM_ADV, NORM_W, b)

# AdamW as torch.optim.AdamW, three steps, then gradient clipping (clip_grad_norm_).
def adamw(params, grads_seq, lr, wd, b1=0.9, b2=0.99, eps=1e-8):
    p = np.array(params, dtype=float)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for step, g in enumerate(grads_seq, start=1):
        g = np.array(g, dtype=float)
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v) / math.sqrt(1 - b2**step) + eps
        p = p - (lr / (1 - b1**step)) * m / denom
    return p.tolist()

out["adamw_rl"] = adamw([0.5, -1.0, 2.0], [[0.1, -0.2, 0.05], [0.3, 0.1, -0.4], [-0.2, 0.0, 0.1]], 0.01, 0.1)
out["adamw_sft"] = adamw([0.5, -1.0, 2.0], [[0.1, -0.2, 0.05], [0.3, 0.1, -0.4], [-0.2, 0.0, 0.1]], 0.01, 0.0)
g = np.array([0.3, -0.4, 1.2])
norm = float(np.sqrt((g**2).sum()))
out["clip"] = {"norm": norm, "clipped": (g * min(1.0, 0.1 / (norm + 1e-6))).tolist()}

# Reward-std-dev learning-rate multiplier (docs/api/training.md#reward-std-lr): per-step means, least squares,
# (a*last+b)/b.
steps = np.array([1.0, 2.0, 3.0, 5.0])
stds = np.array([0.5, (0.4 + 0.5) / 2, 0.3, 0.2])
a, b = np.polyfit(steps, stds, 1)
out["std_multiplier"] = float((a * steps[-1] + b) / b)

print(json.dumps(out, indent=1))
