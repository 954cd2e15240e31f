#!/usr/bin/env python3
"""Reference gradients of one LoRA step, computed by Hugging Face transformers + PEFT.

src/engine/train/lora-reference.test.ts checks the Flywheel trainer's LoRA gradients (before
clipping and the optimizer step) against the values this script writes to
src/engine/train/testdata/reference-lora-gradients.json.

For each fixture architecture (llama, qwen2, qwen3, written by `flywheel models make-tiny`) the
model is loaded with `AutoModelForCausalLM.from_pretrained` and wrapped by `peft.get_peft_model`
with Flywheel's default LoRA (r 8, alpha 16, no dropout, all seven linear layers). lora_A keeps
PEFT's own initialisation; lora_B, which PEFT starts at zero, is set to small seeded normal values
so that both factors get a gradient. Both factors are rounded to float32 and stored in the JSON,
which the test loads as its adapter, so both sides start from the same numbers. The model and the
adapter then run in float64 (a reference free of float32 rounding), on a batch of two sequences of
different lengths; the loss is the SFT loss of `docs/api/training.md#sft`: the cross-entropy of the
completion tokens, summed over the batch and divided by the batch's number of completion tokens.
`loss.backward()` gives dLoss/dA and dLoss/dB of every module, stored as float32.

Regenerate with `npm run reference:regenerate` (after `npm ci`), whenever the fixture generator
changes on purpose (the test reports a digest mismatch).
"""

import os
import re
import sys
import tempfile

import peft
import torch
import transformers

from fixtures import ROOT, f32_base64, make_fixture, weights_digest, write_json

OUTPUT = os.path.join(ROOT, "src", "engine", "train", "testdata", "reference-lora-gradients.json")

LINEAR_NAMES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA = {"rank": 8, "alpha": 16}

# Two sequences of different lengths; the first `promptLength` tokens of each are prompt (no loss).
SEQUENCES = [
    {"tokens": [562, 305, 259, 10, 429, 44, 516, 302, 77, 140, 3, 99], "promptLength": 5},
    {"tokens": [(i * 53 + 7) % 560 for i in range(21)], "promptLength": 8},
]

CASES = [
    {"name": "llama", "args": ["--arch", "llama", "--seed", "1"]},
    {"name": "qwen2", "args": ["--arch", "qwen2", "--seed", "2"]},
    {"name": "qwen3", "args": ["--arch", "qwen3", "--seed", "3"]},
]

MODULE_NAME = re.compile(r"\.layers\.(\d+)\.(?:self_attn|mlp)\.([a-z_]+)\.lora_([AB])\.")


def lora_model(directory, seed):
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32, attn_implementation="eager")
    config = peft.LoraConfig(r=LORA["rank"], lora_alpha=LORA["alpha"], lora_dropout=0.0, target_modules=LINEAR_NAMES, bias="none")
    torch.manual_seed(seed)
    model = peft.get_peft_model(model, config)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if ".lora_B." in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05)
    return model.double()


def lora_parameters(model):
    """{(layer, linear name): {"A": parameter, "B": parameter}} of every adapted module."""
    modules = {}
    for name, parameter in model.named_parameters():
        match = MODULE_NAME.search(name)
        if match:
            layer, linear, factor = int(match.group(1)), match.group(2), match.group(3)
            modules.setdefault((layer, linear), {})[factor] = parameter
    return modules


def sft_loss(model):
    """−Σ log p(completion token) / number of completion tokens, over the batch."""
    count = sum(len(s["tokens"]) - s["promptLength"] for s in SEQUENCES)
    total = 0
    for sequence in SEQUENCES:
        ids = torch.tensor([sequence["tokens"]])
        logits = model(input_ids=ids).logits[0]
        logprobs = torch.log_softmax(logits[:-1], dim=-1).gather(1, ids[0, 1:, None])[:, 0]
        total = total - logprobs[sequence["promptLength"] - 1:].sum()
    return total / count


def main():
    torch.set_num_threads(1)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for index, case in enumerate(CASES):
            directory = os.path.join(scratch, case["name"])
            make_fixture(case["args"], directory)
            model = lora_model(directory, seed=100 + index)
            modules = lora_parameters(model)
            # The adapter as the test will load it: float32 values (exact in float64 too).
            with torch.no_grad():
                for pair in modules.values():
                    for parameter in pair.values():
                        parameter.copy_(parameter.float().double())
            model.train()
            loss = sft_loss(model)
            loss.backward()
            entries = []
            for (layer, linear) in sorted(modules, key=lambda key: (key[0], LINEAR_NAMES.index(key[1]))):
                pair = modules[(layer, linear)]
                entries.append({
                    "layer": layer,
                    "name": linear,
                    "aF32Base64": f32_base64(pair["A"]),
                    "bF32Base64": f32_base64(pair["B"]),
                    "gradAF32Base64": f32_base64(pair["A"].grad),
                    "gradBF32Base64": f32_base64(pair["B"].grad),
                })
            results.append({
                "name": case["name"],
                "makeTinyArgs": case["args"],
                "weightsDigest": weights_digest(directory),
                "loss": loss.item(),
                "modules": entries,
            })
            print(f"{case['name']}: loss {loss.item():.6f}, {len(entries)} modules", file=sys.stderr)
    write_json(OUTPUT, {
        "generator": "scripts/reference/lora_gradients.py (Hugging Face transformers + PEFT)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "lora": {**LORA, "targetModules": LINEAR_NAMES},
        "sequences": SEQUENCES,
        "cases": results,
    })


if __name__ == "__main__":
    main()
