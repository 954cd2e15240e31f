"""One step's loss and LoRA gradients (before clipping and AdamW) from the trainer's own code, for
comparing with Flywheel's built-in trainer on the same rows (src/server/workers/pytorch-parity.test.ts).

    python -m flywheel_trainer.gradients < '{"base_dir": ..., "adapter_dir": ..., "cases": [{"kind": "rl"|"sft", ...}]}'

`device` (optional, default "cpu") is where the model runs, e.g. "cuda".
RL case: `row` (a plan row) and `loss` (the plan's loss options; a KL penalty compares with the base
model); SFT case: `rows` ({tokens, labels}). Prints one {"loss", "metrics", "modules": [{layer, name,
gradA, gradB}]} per case, gradients as base64 little-endian float32.
"""

import base64
import json
import sys

import numpy as np
import torch

from .losses import RlLossOptions
from .model import LoraModel
from .steps import reference_logprobs, rl_gradients, sft_gradients


def _f32(tensor):
    return base64.b64encode(tensor.detach().cpu().double().numpy().astype("<f4").tobytes()).decode("ascii")


def main():
    request = json.load(sys.stdin)
    model = LoraModel(request["base_dir"], request["adapter_dir"], dtype=request.get("dtype", "float32"), device=request.get("device", "cpu"))
    results = [one_case(model, case) for case in request["cases"]]
    json.dump(results, sys.stdout, default=lambda v: None if v is None else float(np.float64(v)))


def one_case(model, request):
    metrics = {}
    if request["kind"] == "rl":
        options = RlLossOptions.from_json(request["loss"])
        ref = reference_logprobs(model, request["row"], "base", None) if options.klPenaltyCoef > 0 else None
        loss, metrics = rl_gradients(model, request["row"], options, ref_logprobs=ref)
    else:
        loss, _ = sft_gradients(model, request["rows"])
    modules = [{"layer": layer, "name": name, "gradA": _f32(pair["A"].grad), "gradB": _f32(pair["B"].grad)} for layer, name, pair in model.modules]
    return {"loss": loss, "metrics": metrics, "modules": modules}


if __name__ == "__main__":
    main()
