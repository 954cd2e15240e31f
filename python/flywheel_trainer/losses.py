"""Flywheel's training losses in torch (src/engine/train/rl-loss.ts, importance-ratios.ts, sft.ts).

Rows arrive in prediction layout: index p scores the token at p + 1. Where the TypeScript trainer
writes a stop-gradient by hand, this code detaches; autograd then gives the gradient that
rl-loss.ts derives analytically. Loss math runs in float64, like the TypeScript trainer's.
"""

from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class RlLossOptions:
    """`rlLossOptions` of config.ts, as the worker protocol's plan sends it (`rl.loss`)."""

    objective: str = "cispo"
    epsilon: float = 1.0
    epsilonHigh: float = 4.0
    importanceSamplingLevel: str = "token"
    maxImportanceSamplingWeight: Optional[float] = None
    maskProbRatio: bool = False
    kimiK2Tau: Optional[float] = None
    klPenaltyCoef: float = 0.0
    klPenaltySource: str = "current_learner"
    truncatedImportanceSampling: Optional[float] = None

    @staticmethod
    def from_json(value):
        fields = RlLossOptions.__dataclass_fields__
        return RlLossOptions(**{key: value[key] for key in fields if key in value})


@dataclass
class RlInputs:
    """`RlLossInputs` of loss-inputs.ts as float64/bool/long tensors of one row's length."""

    mask: torch.Tensor
    old_logprobs: torch.Tensor  # NaN where none
    advantages: torch.Tensor
    weights: torch.Tensor
    group_ids: torch.Tensor
    original_logprobs: Optional[torch.Tensor] = None


def _ratios(inputs, logprobs, old, options):
    """ρ of every position (meaningful where masked), per importance-ratios.ts."""
    mask = inputs.mask
    delta = torch.where(mask, logprobs - old, torch.zeros_like(logprobs))
    groups, index = torch.unique(inputs.group_ids, return_inverse=True)
    sums = torch.zeros(len(groups), dtype=delta.dtype).index_add(0, index, delta)
    counts = torch.zeros(len(groups), dtype=delta.dtype).index_add(0, index, mask.to(delta.dtype))
    mean = (sums / counts.clamp(min=1))[index]
    r = torch.exp(delta)
    s = torch.exp(mean)
    level = options.importanceSamplingLevel
    if level == "token":
        rho = r
    elif level == "sequence":
        rho = s
    elif level == "average":
        rho = (r + s) / 2
    elif level == "geometric_average":
        rho = torch.sqrt(r) * torch.sqrt(s)
    else:
        raise ValueError(f"unknown importance_sampling_level {level!r}")
    cap = options.maxImportanceSamplingWeight
    if cap:
        rho = torch.where(rho > cap, torch.full_like(rho, cap), rho)
    if options.maskProbRatio:
        inside = (rho > 1 - options.epsilon) & (rho < 1 + options.epsilonHigh)
        rho = torch.where(inside, rho, torch.zeros_like(rho))
    return rho


def rl_row_loss(inputs, logprobs, options, entropies=None, ref_logprobs=None, owned=None):
    """The RL loss of one row (rl-loss.ts `rlRowLoss`) as a differentiable scalar, with its metrics.

    `owned` (bool per position) restricts the summed terms to the tokens this rank trains; the
    denominators and the KL mean stay those of the whole row, so the ranks' losses add up to it.
    """
    mask = inputs.mask
    detached = logprobs.detach()
    given = inputs.old_logprobs
    old = torch.where(mask & ~torch.isnan(given), given, detached)
    count = int(mask.sum())
    denominator = count + 1e-18
    live = _ratios(inputs, logprobs, old, options)
    frozen = _ratios(inputs, detached, old, options).detach()

    advantages = inputs.advantages.clone()
    if options.kimiK2Tau:
        advantages = torch.where(mask, advantages - options.kimiK2Tau * (detached - old), advantages)
    kl_policy_ref = None
    if options.klPenaltyCoef > 0:
        if ref_logprobs is None:
            raise ValueError("the KL penalty needs reference logprobs")
        source = old if options.klPenaltySource == "sample" else detached
        kl = torch.where(mask, source - ref_logprobs, torch.zeros_like(source))
        kl_policy_ref = float(kl.sum()) / denominator
        advantages = torch.where(mask, advantages + options.klPenaltyCoef * (kl_policy_ref - kl), advantages)

    factor = torch.ones_like(detached)
    bound = options.truncatedImportanceSampling
    if bound:
        q = frozen
        if inputs.original_logprobs is not None:
            original = inputs.original_logprobs
            q = torch.exp(old - torch.where(torch.isnan(original), detached, original))
        factor = torch.clamp(q, max=bound)
    scale = inputs.weights * factor / denominator

    low, high = 1 - options.epsilon, 1 + options.epsilonHigh
    if options.objective == "ppo":
        unclipped = live * advantages
        clipped = torch.clamp(live, low, high) * advantages
        terms = -torch.where(unclipped <= clipped, unclipped, clipped) * scale
    elif options.objective == "cispo":
        weight = torch.clamp(frozen, low, high)
        terms = -weight * advantages * logprobs * scale
    else:
        raise ValueError(f"unknown objective {options.objective!r}")
    summed = mask if owned is None else mask & owned
    loss = torch.where(summed, terms, torch.zeros_like(terms)).sum()

    metrics = {"num_trainable_tokens": count, "probs_corr": _probs_correlation(inputs, detached)}
    if entropies is not None:
        metrics["entropy"] = float(torch.where(mask, entropies.detach() * inputs.weights, torch.zeros_like(entropies)).sum()) / denominator
    if kl_policy_ref is not None:
        metrics["kl_policy_ref"] = kl_policy_ref
    return loss, metrics


def _probs_correlation(inputs, logprobs):
    """Pearson correlation of exp(old) and exp(new) over trained tokens with old logprobs; 0 when undefined."""
    keep = inputs.mask & ~torch.isnan(inputs.old_logprobs)
    if int(keep.sum()) < 2:
        return 0.0
    xs = torch.exp(inputs.old_logprobs[keep])
    ys = torch.exp(logprobs[keep])
    dx, dy = xs - xs.mean(), ys - ys.mean()
    sxx, syy = float((dx * dx).sum()), float((dy * dy).sum())
    if not (sxx > 0 and syy > 0) or sxx == float("inf") or syy == float("inf"):
        return 0.0
    return float((dx * dy).sum()) / (sxx * syy) ** 0.5


def sampler_logprob_max_diff(sampled, recomputed, mask):
    """max |recomputed − sampled| over trained positions with a sampled logprob; None if none."""
    keep = mask & ~torch.isnan(sampled)
    if not bool(keep.any()):
        return None
    return float((recomputed[keep] - sampled[keep]).abs().max())


def sft_sequence_loss(logprobs, mask, num_trainable_tokens):
    """One sequence's part of the SFT batch loss: −Σ ℓ·m / N with N the whole batch's trained tokens."""
    return -(torch.where(mask, logprobs, torch.zeros_like(logprobs)).sum()) / num_trainable_tokens
