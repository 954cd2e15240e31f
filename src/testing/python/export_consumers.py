"""Loads Flywheel's checkpoint exports with the real consumers and reports what they compute.

Input (one JSON argument): {"base": DIR, "peft": DIR, "merged": DIR, "gguf": FILE, "tokens": [ids]}.
Output (stdout, JSON):
  peft_logits    logits of PeftModel.from_pretrained(base, peft) on the tokens, [positions][vocab]
  merged_logits  logits of transformers' AutoModelForCausalLM on the merged directory
  adapter_config the adapter_config.json PEFT read (its LoraConfig as a dict)
  gguf           the architecture, tensor count and, per linear weight, the largest difference
                 between the GGUF's values and the merged model's (read back with the gguf package)
"""

import json
import sys

import gguf
import numpy as np
import torch
from peft import PeftConfig, PeftModel
from transformers import AutoModelForCausalLM

GGUF_LINEARS = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def logits_of(model, tokens):
    model.eval()
    with torch.no_grad():
        return model(torch.tensor([tokens])).logits[0].float().tolist()


def gguf_summary(path, merged_state):
    reader = gguf.GGUFReader(path)
    arch_field = reader.fields["general.architecture"]
    architecture = bytes(arch_field.parts[arch_field.data[0]]).decode("utf-8")
    differences = {}
    for tensor in reader.tensors:
        parts = tensor.name.split(".")
        if len(parts) != 4 or parts[0] != "blk" or parts[2] not in GGUF_LINEARS or parts[3] != "weight":
            continue
        hf_name = f"model.layers.{parts[1]}.{GGUF_LINEARS[parts[2]]}.weight"
        expected = merged_state[hf_name].float().numpy()
        values = np.asarray(tensor.data, dtype=np.float32).reshape(expected.shape)
        differences[tensor.name] = float(np.max(np.abs(values - expected)))
    return {"architecture": architecture, "tensor_count": len(reader.tensors), "linear_max_abs_difference": differences}


def main():
    args = json.loads(sys.argv[1])
    tokens = args["tokens"]
    base = AutoModelForCausalLM.from_pretrained(args["base"], dtype=torch.float32)
    peft_model = PeftModel.from_pretrained(base, args["peft"])
    merged = AutoModelForCausalLM.from_pretrained(args["merged"], dtype=torch.float32)
    result = {
        "peft_logits": logits_of(peft_model, tokens),
        "merged_logits": logits_of(merged, tokens),
        "adapter_config": PeftConfig.from_pretrained(args["peft"]).to_dict(),
        "gguf": gguf_summary(args["gguf"], merged.state_dict()),
    }
    json.dump(result, sys.stdout, default=lambda value: sorted(value) if isinstance(value, set) else str(value))


if __name__ == "__main__":
    main()
