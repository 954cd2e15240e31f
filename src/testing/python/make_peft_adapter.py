"""Makes a LoRA adapter the way a PEFT user would, elsewhere than Flywheel, and its logits.

Input (one JSON argument): {"base": DIR, "out": DIR, "r": int, "lora_alpha": number,
"target_modules": [names], "seed": int, "tokens": [ids]}. Saves the adapter with
`save_pretrained` (random A and B, so it changes the model) and prints {"logits": [positions][vocab]}
of the base model with the adapter on the tokens.
"""

import json
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM


def main():
    args = json.loads(sys.argv[1])
    torch.manual_seed(args["seed"])
    base = AutoModelForCausalLM.from_pretrained(args["base"], dtype=torch.float32)
    config = LoraConfig(r=args["r"], lora_alpha=args["lora_alpha"], target_modules=args["target_modules"], init_lora_weights=False, task_type="CAUSAL_LM")
    model = get_peft_model(base, config)
    model.save_pretrained(args["out"])
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([args["tokens"]])).logits[0].float().tolist()
    json.dump({"logits": logits}, sys.stdout)


if __name__ == "__main__":
    main()
