#!/usr/bin/env python3
"""The PyTorch trainer (python/flywheel_trainer) on an accelerator: its RL step against a plain
Hugging Face transformers + PEFT training step on the same device, the same model and the same
tokens, and (with --parity) its loss and LoRA gradients on the device against the same code on the
CPU, which the test suite holds to the built-in trainer's within 1e-4.

    PYTHONPATH=python python bench/pytorch_trainer_device.py --device cuda [--parity CASES_DIR]

The model has Qwen2.5-0.5B's shapes with random weights (made from its configuration, nothing is
downloaded); LoRA rank 8, alpha 16, on every linear layer. A step trains one packed RL row of
--row-tokens tokens: a 64-token prompt and 8 completions sharing it. The plain step is forward
(causal), cross-entropy over the completion tokens, backward, clip_grad_norm_, torch.optim.AdamW.
CASES_DIR holds base/, adapter/ and cases.json, the request of `python -m flywheel_trainer.gradients`.
Prints one JSON line per measurement.
"""

import argparse
import json
import os
import tempfile
import time

import peft
import torch
import transformers

from flywheel_trainer.gradients import one_case
from flywheel_trainer.model import LoraModel
from flywheel_trainer.steps import run_plan

QWEN25_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
PROMPT, COMPLETIONS = 64, 8


def emit(record):
    print(json.dumps(record), flush=True)


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def write_model(directory, dtype):
    torch.manual_seed(0)
    config = transformers.Qwen2Config(**QWEN25_05B)
    model = transformers.Qwen2ForCausalLM(config).to(dtype)
    model.save_pretrained(os.path.join(directory, "base"))
    lora = peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=TARGETS, bias="none")
    adapted = peft.get_peft_model(model, lora)
    # B starts at zero in PEFT; a small nonzero B gives both factors gradients, as after a first step.
    with torch.no_grad():
        for name, parameter in adapted.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.01)
    adapted.save_pretrained(os.path.join(directory, "adapter"))


def rl_row(row_tokens, seed):
    """A packed RL row: the prompt (group 0), then completions (groups 1..8) that attend to it."""
    generator = torch.Generator().manual_seed(seed)
    length = (row_tokens - PROMPT) // COMPLETIONS
    tokens = torch.randint(0, QWEN25_05B["vocab_size"], (PROMPT + COMPLETIONS * length,), generator=generator).tolist()
    group_ids, parent_ids, input_pos, mask, logprobs, advantages = [], [], [], [], [], []
    for p in range(PROMPT):
        group_ids.append(0), parent_ids.append(-1), input_pos.append(p), mask.append(0), logprobs.append(None), advantages.append(0.0)
    for c in range(COMPLETIONS):
        advantage = 1.0 if c % 2 == 0 else -1.0
        for t in range(length):
            group_ids.append(c + 1), parent_ids.append(0), input_pos.append(PROMPT + t), mask.append(1)
            logprobs.append(-12.0 + 0.01 * t), advantages.append(advantage)
    n = len(tokens)
    return {"tokens": tokens, "group_ids": group_ids, "parent_ids": parent_ids, "input_pos": input_pos, "assistant_mask": mask, "logprobs": logprobs, "advantages": advantages, "weights": [1.0] * n}


def flywheel_steps(model, rows, device):
    plan = {"kind": "rl", "kl_reference": None, "rl": {"loss": {"objective": "cispo", "epsilon": 1.0, "epsilonHigh": 4.0}, "precalculate_logprobs": False, "group_counts": {}, "steps": [{"learning_rate": 1e-5, "row": row} for row in rows]}}
    times = []
    steps = run_plan(model, plan)
    sync(device)
    last = time.perf_counter()
    for kind, _ in steps:
        if kind == "gradient_step":
            sync(device)
            now = time.perf_counter()
            times.append(now - last)
            last = now
    return times


def plain_steps(directory, dtype, rows, device):
    base = transformers.AutoModelForCausalLM.from_pretrained(os.path.join(directory, "base"), dtype=dtype, attn_implementation="sdpa")
    model = peft.PeftModel.from_pretrained(base, os.path.join(directory, "adapter"), is_trainable=True).to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    times = []
    for row in rows:
        sync(device)
        started = time.perf_counter()
        ids = torch.tensor([row["tokens"]], device=device)
        logits = model(input_ids=ids).logits[0, :-1].float()
        targets = ids[0, 1:]
        keep = torch.tensor(row["assistant_mask"][1:], device=device, dtype=torch.bool)
        loss = torch.nn.functional.cross_entropy(logits[keep], targets[keep])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 0.1)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync(device)
        times.append(time.perf_counter() - started)
    del model, base, optimizer
    return times


def summary(label, times, warmup, row_tokens, device, **extra):
    timed = times[warmup:]
    seconds = sum(timed) / len(timed)
    record = {"measure": label, "device": device, "row_tokens": row_tokens, "seconds_per_step": round(seconds, 4), "tokens_per_second": round(row_tokens / seconds, 1), **extra}
    if device.startswith("cuda"):
        record["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        torch.cuda.reset_peak_memory_stats()
    emit(record)


def parity(cases_dir, device):
    """Every case of cases.json on the device and on the CPU: the worst difference of the loss and
    of each LoRA gradient, relative to the tensor's largest CPU magnitude."""
    with open(os.path.join(cases_dir, "cases.json")) as handle:
        cases = json.load(handle)
    results = {}
    for where in ("cpu", device):
        model = LoraModel(os.path.join(cases_dir, "base"), os.path.join(cases_dir, "adapter"), device=where)
        results[where] = []
        for case in cases:
            one = one_case(model, case)
            grads = [pair[f].grad.detach().double().cpu().clone() for _, _, pair in model.modules for f in ("A", "B")]
            results[where].append((one["loss"], grads))
    for index, case in enumerate(cases):
        (cpu_loss, cpu_grads), (dev_loss, dev_grads) = results["cpu"][index], results[device][index]
        nonzero = [(a, b) for a, b in zip(cpu_grads, dev_grads) if float(a.abs().max()) > 0]
        worst = max((float((a - b).abs().max() / a.abs().max()) for a, b in nonzero), default=0.0)
        emit({"measure": "parity", "case": index, "kind": case["kind"], "objective": case.get("loss", {}).get("objective"), "loss_cpu": cpu_loss, "loss_device": dev_loss, "loss_relative_difference": abs(cpu_loss - dev_loss) / max(1.0, abs(cpu_loss)), "worst_gradient_relative_difference": worst, "nonzero_gradients": len(nonzero)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--row-tokens", type=int, action="append", help="tokens per packed row (repeat; default 512 and 2048)")
    parser.add_argument("--dtype", action="append", choices=["float32", "bfloat16"], help="base model dtype (repeat; default both)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--parity", help="a directory with base/, adapter/ and cases.json")
    args = parser.parse_args()
    device = args.device
    if device.startswith("cuda"):
        emit({"measure": "device", "name": torch.cuda.get_device_name(), "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__})
    if args.parity:
        parity(args.parity, device)
    for dtype_name in args.dtype or ["float32", "bfloat16"]:
        dtype = getattr(torch, dtype_name)
        with tempfile.TemporaryDirectory() as directory:
            write_model(directory, dtype)
            for row_tokens in args.row_tokens or [512, 2048]:
                rows = [rl_row(row_tokens, seed) for seed in range(args.warmup + args.steps)]
                model = LoraModel(os.path.join(directory, "base"), os.path.join(directory, "adapter"), dtype=dtype_name, device=device)
                summary("flywheel_trainer RL step", flywheel_steps(model, rows, device), args.warmup, row_tokens, device, dtype=dtype_name, attention=model.attention)
                del model
                summary("transformers + PEFT step", plain_steps(directory, dtype, rows, device), args.warmup, row_tokens, device, dtype=dtype_name, attention="sdpa")


if __name__ == "__main__":
    main()
