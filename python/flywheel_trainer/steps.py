"""A job's optimizer steps, from the plan the server made (src/server/workers/job-plan.ts): one step
per packed RL row or per SFT batch, each with its learning rate. With several ranks, each rank
computes the gradient of its share of the step (SFT: rows; RL: results, whose tokens carry the
sequence-level ratios) against the whole step's denominators; the gradients are summed across ranks
and every rank takes the same clipped AdamW step, so the adapter stays identical everywhere."""

import time

import torch

from .losses import RlInputs, RlLossOptions, rl_row_loss, sampler_logprob_max_diff, sft_sequence_loss
from .model import packed_attention
from .optimizer import SETTINGS, AdamW, NonFiniteTraining, clip_grad_norm


class Ranks:
    """This process's place among the job's ranks (one rank without torch.distributed). `device` is
    where collectives run: NCCL reduces only tensors on the rank's GPU, gloo only on the CPU."""

    def __init__(self, rank=0, world=1, device="cpu"):
        self.rank, self.world, self.device = rank, world, device

    def all_reduce(self, tensor):
        """The sum over ranks, computed on the collectives' device, returned where `tensor` was."""
        if self.world == 1:
            return tensor
        moved = tensor.to(self.device)
        torch.distributed.all_reduce(moved, op=torch.distributed.ReduceOp.SUM)
        return moved.to(tensor.device)


def rl_inputs(row, precalculated=None):
    """loss-inputs.ts `rlLossInputs` of a plan row (index p describes token p + 1), optionally with
    precalculated old logprobs (the sampler's kept as the original ones)."""
    n = len(row["tokens"])
    shift = lambda values, fill: values[1:] + [fill]  # noqa: E731
    nan = float("nan")
    sampled = torch.tensor([nan if v is None else v for v in shift(row["logprobs"], None)], dtype=torch.float64)
    inputs = RlInputs(
        mask=torch.tensor(shift(row["assistant_mask"], 0), dtype=torch.bool),
        old_logprobs=sampled,
        advantages=torch.tensor(shift(row["advantages"], 0.0), dtype=torch.float64),
        weights=torch.tensor(shift(row["weights"], 0.0), dtype=torch.float64),
        group_ids=torch.tensor(shift(row["group_ids"], -1), dtype=torch.long),
    )
    assert inputs.mask.numel() == n
    if precalculated is not None:
        inputs.original_logprobs = sampled
        inputs.old_logprobs = torch.where(inputs.mask, precalculated, torch.full_like(precalculated, nan))
    return inputs


def row_scores(model, row, need_entropy=False):
    allowed = packed_attention(row["group_ids"], row["parent_ids"])
    return model.scores(row["tokens"], positions=row["input_pos"], allowed=allowed, need_entropy=need_entropy)


def owned_tokens(inputs, ranks):
    """The positions this rank's loss sums: the results (group ids) dealt out round-robin."""
    if ranks.world == 1:
        return None
    groups = sorted(set(inputs.group_ids[inputs.mask].tolist()))
    mine = torch.tensor([g for i, g in enumerate(groups) if i % ranks.world == ranks.rank], dtype=torch.long)
    return torch.isin(inputs.group_ids, mine)


def rl_gradients(model, row, options, precalculated=None, ref_logprobs=None, ranks=Ranks()):
    """Zeroes the gradients, backpropagates this rank's share of the row's loss and sums the
    gradients over the ranks; returns the whole row's loss and metrics."""
    inputs = rl_inputs(row, precalculated)
    logprobs, entropies = row_scores(model, row, need_entropy=True)
    loss, metrics = rl_row_loss(inputs, logprobs, options, entropies=entropies, ref_logprobs=ref_logprobs, owned=owned_tokens(inputs, ranks))
    for parameter in model.parameters:
        parameter.grad = torch.zeros_like(parameter)
    if metrics["num_trainable_tokens"] > 0 and loss.requires_grad:
        loss.backward()
    total = _reduce_gradients(model, ranks, float(loss.detach()))
    sampled = rl_inputs(row).old_logprobs
    metrics["sampler_logprob_max_diff"] = sampler_logprob_max_diff(sampled, logprobs.detach(), inputs.mask)
    return total, metrics


def sft_gradients(model, rows, ranks=Ranks()):
    """Zeroes the gradients and backpropagates the SFT batch loss over this rank's rows (every
    world-th), normalised by the whole batch's trained tokens; sums over ranks; returns the loss."""
    masks = [torch.tensor([label != -100 for label in row["labels"][1:]] + [False]) for row in rows]
    total_tokens = sum(int(mask.sum()) for mask in masks)
    for parameter in model.parameters:
        parameter.grad = torch.zeros_like(parameter)
    loss = 0.0
    for index, (row, mask) in enumerate(zip(rows, masks)):
        if index % ranks.world != ranks.rank or total_tokens == 0 or not bool(mask.any()):
            continue
        logprobs, _ = model.scores(row["tokens"])
        part = sft_sequence_loss(logprobs, mask, total_tokens)
        part.backward()
        loss += float(part.detach())
    return _reduce_gradients(model, ranks, loss), total_tokens


def _reduce_gradients(model, ranks, loss):
    if ranks.world == 1:
        return loss
    flat = torch.cat([p.grad.reshape(-1).double().cpu() for p in model.parameters] + [torch.tensor([loss], dtype=torch.float64)])
    flat = ranks.all_reduce(flat)
    offset = 0
    for parameter in model.parameters:
        size = parameter.numel()
        parameter.grad.copy_(flat[offset : offset + size].reshape(parameter.shape).to(parameter.grad.dtype))
        offset += size
    return float(flat[-1])


def apply_gradients(model, optimizer, mode, learning_rate):
    if not (learning_rate > 0):
        raise NonFiniteTraining(f"the step's learning rate {learning_rate} is not positive")
    norm = clip_grad_norm(model.parameters, SETTINGS[mode]["max_grad_norm"])
    optimizer.begin_job(mode)
    optimizer.step(learning_rate)
    return norm


def run_plan(model, plan, optimizer_state=None, reference_state=None, ranks=Ranks(), should_stop=lambda: False):
    """Yields ("started", n), then ("gradient_step", metrics) per step; returns the optimizer.
    `reference_state` is the KL reference adapter's factors (None: the base model, with the adapter off)."""
    optimizer = AdamW(model.parameters, optimizer_state)
    if plan["kind"] == "sft":
        steps = plan["sft"]["steps"]
        yield "started", len(steps)
        for step in steps:
            if should_stop():
                return optimizer
            started = time.perf_counter()
            loss, trained = sft_gradients(model, step["rows"], ranks)
            if loss != loss or loss in (float("inf"), float("-inf")):
                raise NonFiniteTraining(f"the loss is not finite ({loss})")
            norm = apply_gradients(model, optimizer, "sft", step["learning_rate"])
            seconds = time.perf_counter() - started
            yield "gradient_step", {
                "loss": loss,
                "learning_rate": step["learning_rate"],
                "grad_norm": norm,
                "num_trajectories": len(step["rows"]),
                "num_tokens": sum(len(row["tokens"]) for row in step["rows"]),
                "num_trainable_tokens": trained,
                "tokens_per_second": trained / seconds if seconds > 0 else 0,
            }
        return optimizer

    rl = plan["rl"]
    options = RlLossOptions.from_json(rl["loss"])
    rows = [step["row"] for step in rl["steps"]]
    yield "started", len(rows)
    precalculated = None
    if rl["precalculate_logprobs"]:
        with torch.no_grad():
            precalculated = [row_scores(model, row)[0] for row in rows]
    for index, step in enumerate(rl["steps"]):
        if should_stop():
            return optimizer
        started = time.perf_counter()
        ref = reference_logprobs(model, step["row"], plan["kl_reference"], reference_state) if options.klPenaltyCoef > 0 else None
        loss, metrics = rl_gradients(model, step["row"], options, precalculated[index] if precalculated else None, ref, ranks)
        if loss != loss or loss in (float("inf"), float("-inf")):
            raise NonFiniteTraining(f"the loss is not finite ({loss})")
        norm = apply_gradients(model, optimizer, "rl", step["learning_rate"])
        seconds = time.perf_counter() - started
        out = {"loss": loss}
        if "entropy" in metrics:
            out["entropy"] = metrics["entropy"]
        out["grad_norm"] = norm
        out["learning_rate"] = step["learning_rate"]
        if "kl_policy_ref" in metrics:
            out["kl_policy_ref"] = metrics["kl_policy_ref"]
        out["probs_corr"] = metrics["probs_corr"]
        out["num_trainable_tokens"] = metrics["num_trainable_tokens"]
        if metrics["sampler_logprob_max_diff"] is not None:
            out["sampler_logprob_max_diff"] = metrics["sampler_logprob_max_diff"]
        out["tokens_per_second"] = metrics["num_trainable_tokens"] / seconds if seconds > 0 else 0
        out.update(rl["group_counts"])
        yield "gradient_step", out
    return optimizer


def reference_logprobs(model, row, kind, reference_state):
    """The KL reference's logprobs of a row: the base model (adapter off) or the reference adapter."""
    with torch.no_grad():
        if kind == "adapter" and reference_state is not None:
            current = model.adapter_state()
            model.load_state(reference_state)
            try:
                return row_scores(model, row)[0]
            finally:
                model.load_state(current)
        with model.model.disable_adapter():
            return row_scores(model, row)[0]
