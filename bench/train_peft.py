#!/usr/bin/env python3
"""The PyTorch side of `npm run bench:train` (bench/train-vs-pytorch.ts): Hugging Face transformers
+ PEFT on the CPU, on the checkpoint directory and the token rows the benchmark wrote.

    python bench/train_peft.py --model DIR --rows ROWS.json --threads N [--autocast bf16]

ROWS.json: {"rows": [[token ids]...] (equal lengths), "promptLength": P, "mode": "lora"|"full",
"measures": ["step", "score"], "warmup": W, "steps": S, "learningRate": LR, "lora": {"rank", "alpha",
"targetModules"}}. What is timed, mirroring what the Flywheel side runs:
- step: one optimizer step on the batch: forward, the SFT loss (cross-entropy of the tokens after
  the prompt, mean over them), backward, clip_grad_norm_(1.0), AdamW (betas 0.9/0.99, eps 1e-8, no
  weight decay); "lora" trains a PEFT LoRA (PEFT's init, no dropout) on the frozen base, "full"
  every weight;
- score: forward only, the logprob and entropy of every next token (as Flywheel's
  sequenceLogprobs computes), with the adapter in "lora" mode.
--autocast bf16 (default: f32 throughout) runs the model's forward under torch.autocast("cpu",
dtype=torch.bfloat16), so its matrix products, and their backward, take bf16 operands; the weights,
gradients and AdamW stay f32, and the logits are cast to f32 before the loss, log_softmax and
entropy, so those are f32 too. Its losses are a bf16 forward's, so they read a little off the f32
loss of the same weights.
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
    parser.add_argument("--autocast", choices=["bf16"], help="the forward under bf16 autocast (default: f32 throughout)")
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

    def logits():
        # Autocast covers the model only: the loss and logprobs read f32 logits (.float() of f32 is the tensor itself).
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast == "bf16"):
            output = model(input_ids=ids).logits
        return output.float()

    def step():
        model.train()
        predicting = logits()[:, prompt - 1:-1, :]
        loss = torch.nn.functional.cross_entropy(predicting.reshape(-1, predicting.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    @torch.inference_mode()
    def score():
        model.eval()
        logprobs = torch.log_softmax(logits()[:, :-1, :], dim=-1)
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
    emit({"done": True, "backend": f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers {transformers.__version__}, peft {peft.__version__}{', bf16 autocast' if args.autocast else ''}"})


if __name__ == "__main__":
    sys.exit(main())
