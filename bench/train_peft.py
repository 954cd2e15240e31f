#!/usr/bin/env python3
"""The PyTorch side of `npm run bench:train` (bench/train-vs-pytorch.ts): Hugging Face transformers
+ PEFT on the CPU, on the checkpoint directory and the token rows the benchmark wrote.

    python bench/train_peft.py --model DIR --rows ROWS.json --threads N

ROWS.json: {"rows": [[token ids]...] (equal lengths), "promptLength": P, "mode": "lora"|"full",
"measures": ["step", "score"], "warmup": W, "steps": S, "learningRate": LR, "lora": {"rank", "alpha",
"targetModules"}}. What is timed, mirroring what the Flywheel side runs:
- step: one optimizer step on the batch: forward, the SFT loss (cross-entropy of the tokens after
  the prompt, mean over them), backward, clip_grad_norm_(1.0), AdamW (betas 0.9/0.99, eps 1e-8, no
  weight decay); "lora" trains a PEFT LoRA (PEFT's init, no dropout) on the frozen base, "full"
  every weight;
- score: forward only, the logprob and entropy of every next token (as Flywheel's
  sequenceLogprobs computes), with the adapter in "lora" mode.
Each measure runs W warm-up steps, then S timed ones. Prints one JSON line per step (wall and CPU
seconds, loss), then a summary line {"done": true, ...}.
"""

import argparse
import json
import sys
import time

import peft
import torch
import transformers


def emit(record):
    print(json.dumps(record), flush=True)


def load(model_dir, mode, lora):
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if mode == "lora":
        config = peft.LoraConfig(r=lora["rank"], lora_alpha=lora["alpha"], lora_dropout=0.0, target_modules=lora["targetModules"], bias="none")
        model = peft.get_peft_model(model, config)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--rows", required=True)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    with open(args.rows) as handle:
        spec = json.load(handle)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = load(args.model, spec["mode"], spec.get("lora"))
    ids = torch.tensor(spec["rows"], dtype=torch.long)
    prompt = spec["promptLength"]
    targets = ids[:, prompt:]
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=spec["learningRate"], betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0)

    def step():
        model.train()
        logits = model(input_ids=ids).logits
        predicting = logits[:, prompt - 1:-1, :]
        loss = torch.nn.functional.cross_entropy(predicting.reshape(-1, predicting.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    @torch.inference_mode()
    def score():
        model.eval()
        logprobs = torch.log_softmax(model(input_ids=ids).logits[:, :-1, :], dim=-1)
        chosen = logprobs.gather(-1, ids[:, 1:, None])[..., 0]
        # Flywheel's scoring computes each position's entropy too; eager mode runs this as written.
        entropy = -(logprobs.exp() * logprobs).sum(-1)
        assert torch.isfinite(entropy).all()
        return float(-chosen[:, prompt - 1:].mean())

    runs = {"step": step, "score": score}
    for measure in spec["measures"]:
        for index in range(spec["warmup"] + spec["steps"]):
            started, cpu_started = time.perf_counter(), time.process_time()
            loss = runs[measure]()
            seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
            emit({"measure": measure, "index": index, "warmup": index < spec["warmup"], "seconds": seconds, "cpuSeconds": cpu_seconds, "loss": loss})
    emit({"done": True, "backend": f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers {transformers.__version__}, peft {peft.__version__}"})


if __name__ == "__main__":
    sys.exit(main())
