"""AdamW and gradient clipping exactly as Flywheel's trainer computes them (src/engine/train/adamw.ts):
PyTorch's AdamW formulas in float64 with float32 moments and weights, the RL and SFT settings, moments
cleared when a model switches between RL and SFT, and the moments kept beside a checkpoint in
Flywheel's `optimizer.safetensors` (so either trainer continues where the other stopped)."""

import math

import safetensors
import safetensors.torch
import torch

SETTINGS = {
    "rl": {"beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1, "max_grad_norm": 0.1},
    "sft": {"beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.0, "max_grad_norm": 1.0},
}
OPTIMIZER_FILE = "optimizer.safetensors"
_FORMAT = "flywheel-adamw-v1"


class NonFiniteTraining(Exception):
    pass


class AdamW:
    def __init__(self, parameters, state=None):
        self.parameters = parameters
        sizes = [p.numel() for p in parameters]
        if state is not None and not _fits(state, sizes):
            state = None  # moments of another adapter shape: start fresh, as the built-in trainer does
        self.state = state or _empty(sizes)
        self._place_moments()

    def _place_moments(self):
        """Moments live beside their parameters (on the GPU when training there): no copies per step."""
        for key in ("exp_avg", "exp_avg_sq"):
            self.state[key] = [m.to(p.device) for m, p in zip(self.state[key], self.parameters)]

    def begin_job(self, mode):
        if self.state["mode"] is not None and self.state["mode"] != mode:
            self.state = {**_empty([p.numel() for p in self.parameters]), "mode": mode}
            self._place_moments()
        self.state["mode"] = mode

    def step(self, learning_rate):
        """One update from the parameters' .grad (already clipped), all tensors at once: a few
        kernels over one flat vector rather than a dozen per tensor (on a GPU each is a launch)."""
        options = SETTINGS[self.state["mode"]]
        beta1, beta2, eps, decay_rate = options["beta1"], options["beta2"], options["eps"], options["weight_decay"]
        self.state["step"] += 1
        step = self.state["step"]
        step_size = learning_rate / (1 - beta1**step)
        correction2 = math.sqrt(1 - beta2**step)
        decay = 1 - learning_rate * decay_rate
        sizes = [p.numel() for p in self.parameters]
        with torch.no_grad():
            grad = _flat([p.grad for p in self.parameters])
            m = beta1 * _flat(self.state["exp_avg"]) + (1 - beta1) * grad
            v = beta2 * _flat(self.state["exp_avg_sq"]) + (1 - beta2) * grad * grad
            updated = (_flat(self.parameters) * decay - (step_size * m) / (v.sqrt() / correction2 + eps)).float()
            if not bool(torch.isfinite(updated).all()):
                raise NonFiniteTraining(f"the updated weights are not finite at learning rate {learning_rate}")
            self.state["exp_avg"] = list(m.float().split(sizes))
            self.state["exp_avg_sq"] = list(v.float().split(sizes))
            for parameter, value in zip(self.parameters, updated.split(sizes)):
                parameter.copy_(value.reshape(parameter.shape))

    def save(self, path):
        tensors = {}
        for index, (m, v) in enumerate(zip(self.state["exp_avg"], self.state["exp_avg_sq"])):
            tensors[f"exp_avg.{index}"] = m.cpu().contiguous()
            tensors[f"exp_avg_sq.{index}"] = v.cpu().contiguous()
        metadata = {"format": _FORMAT, "step": str(self.state["step"]), "mode": self.state["mode"] or "none", "tensors": str(len(self.state["exp_avg"]))}
        safetensors.torch.save_file(tensors, path, metadata=metadata)


def clip_grad_norm(parameters, max_norm):
    """Scales all gradients so their global L2 norm is at most max_norm (coefficient max/(norm + 1e-6),
    applied below 1); returns the norm before clipping. A non-finite norm is an error."""
    # One flat vector on the parameters' device and one read back (not a device sync per tensor).
    grads = _flat([parameter.grad for parameter in parameters])
    norm = math.sqrt(float(grads.square().sum()))
    if not math.isfinite(norm):
        raise NonFiniteTraining(f"the gradient norm is not finite ({norm})")
    coefficient = max_norm / (norm + 1e-6)
    if coefficient < 1:
        with torch.no_grad():
            scaled = grads * coefficient
            for parameter, value in zip(parameters, scaled.split([p.numel() for p in parameters])):
                parameter.grad.copy_(value.reshape(parameter.grad.shape))
    return norm


def _flat(tensors):
    """The tensors as one float64 vector (a copy)."""
    return torch.cat([tensor.detach().reshape(-1).double() for tensor in tensors])


def read_state(path):
    """Flywheel's optimizer file, or None when it is not one."""
    with safetensors.safe_open(path, framework="pt") as handle:
        metadata = handle.metadata() or {}
        if metadata.get("format") != _FORMAT:
            return None
        count = int(metadata["tensors"])
        mode = metadata.get("mode")
        return {
            "step": int(metadata["step"]),
            "mode": mode if mode in ("rl", "sft") else None,
            "exp_avg": [handle.get_tensor(f"exp_avg.{i}").float().reshape(-1) for i in range(count)],
            "exp_avg_sq": [handle.get_tensor(f"exp_avg_sq.{i}").float().reshape(-1) for i in range(count)],
        }


def _empty(sizes):
    return {"step": 0, "mode": None, "exp_avg": [torch.zeros(size) for size in sizes], "exp_avg_sq": [torch.zeros(size) for size in sizes]}


def _fits(state, sizes):
    return len(state["exp_avg"]) == len(sizes) and all(m.numel() == size for m, size in zip(state["exp_avg"], sizes))
