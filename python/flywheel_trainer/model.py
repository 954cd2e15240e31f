"""The base model with its LoRA adapter (transformers + PEFT), in Flywheel's parameter order, and the
forward passes of Flywheel's rows: a plain sequence, or a packed RL row whose completions attend to
their own tokens and to the prompt they share (src/engine/train/attention.ts)."""

import json
import os
import re

import peft
import safetensors.torch
import torch
import transformers

# Flywheel's order of a layer's linear layers (src/engine/model/types.ts LINEAR_NAMES).
LINEAR_NAMES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
_FACTOR = re.compile(r"\.layers\.(\d+)\.(?:self_attn|mlp)\.([a-z_]+)\.lora_([AB])\.")

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


class LoraModel:
    """A PEFT model whose trainable tensors are listed as Flywheel's optimizer lists them:
    modules in layer order, then forward order within a layer; lora_A then lora_B of each."""

    def __init__(self, base_dir, adapter_dir, dtype="float32", device="cpu", attention="sdpa"):
        # Packed rows need an arbitrary mask: "sdpa" takes one and runs fused kernels on GPUs; "eager"
        # materializes every attention matrix for backward (the reference, slower, more memory).
        self.attention = attention
        base = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=DTYPES[dtype], attn_implementation=attention)
        self.model = peft.PeftModel.from_pretrained(base, adapter_dir, is_trainable=True)
        self.model.to(device)
        self.device = device
        with open(os.path.join(adapter_dir, "adapter_config.json")) as handle:
            self.adapter_config_text = handle.read()
        modules = {}
        for name, parameter in self.model.named_parameters():
            match = _FACTOR.search(name)
            if match:
                key = (int(match.group(1)), LINEAR_NAMES.index(match.group(2)))
                modules.setdefault(key, {})[match.group(3)] = parameter
            else:
                parameter.requires_grad_(False)
        self.modules = [(layer, LINEAR_NAMES[index], modules[(layer, index)]) for (layer, index) in sorted(modules)]
        self.parameters = [pair[factor] for _, _, pair in self.modules for factor in ("A", "B")]
        for parameter in self.parameters:
            parameter.requires_grad_(True)
        # Flywheel trains without dropout: eval mode turns it off; gradients flow all the same.
        self.model.eval()

    def scores(self, tokens, positions=None, allowed=None, need_entropy=False):
        """ℓ_p = log p(tokens[p + 1] | …) at every position p (the last is 0: nothing follows), float64,
        and the entropy of each position's distribution when asked."""
        ids = torch.tensor([tokens], device=self.device)
        kwargs = {"input_ids": ids}
        if positions is not None:
            kwargs["position_ids"] = torch.tensor([positions], device=self.device)
        if allowed is not None:
            dtype = next(self.model.parameters()).dtype
            kwargs["attention_mask"] = torch.where(allowed.to(self.device), 0.0, torch.finfo(dtype).min).to(dtype)[None, None]
        logits = self.model(**kwargs).logits[0].float()
        logprobs_all = torch.log_softmax(logits, dim=-1)
        targets = torch.tensor(tokens[1:] + [0], device=self.device)
        logprobs = logprobs_all.gather(1, targets[:, None])[:, 0].double().cpu()
        logprobs = torch.cat([logprobs[:-1], torch.zeros(1, dtype=torch.float64)])
        entropies = None
        if need_entropy:
            with torch.no_grad():
                entropies = -(logprobs_all.exp() * logprobs_all).sum(-1).double().cpu()
        return logprobs, entropies

    def adapter_state(self):
        """A copy of the adapter's factors (to swap a KL reference in and out)."""
        return [parameter.detach().clone() for parameter in self.parameters]

    def load_state(self, tensors):
        with torch.no_grad():
            for parameter, value in zip(self.parameters, tensors):
                parameter.copy_(value)

    def save(self, directory):
        """The adapter in PEFT layout, as the built-in trainer writes it: the same adapter_config.json,
        float32 factors under PEFT's names."""
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "adapter_config.json"), "w") as handle:
            handle.write(self.adapter_config_text)
        tensors = {}
        for layer, name, pair in self.modules:
            path = "self_attn" if name in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp"
            for factor in ("A", "B"):
                tensors[f"base_model.model.model.layers.{layer}.{path}.{name}.lora_{factor}.weight"] = pair[factor].detach().float().cpu().contiguous()
        safetensors.torch.save_file(tensors, os.path.join(directory, "adapter_model.safetensors"), metadata={"format": "pt"})


def packed_attention(group_ids, parent_ids):
    """attention.ts `mayAttend` as a dense bool matrix: q sees k ≤ q of its own group or its parent group."""
    groups = torch.tensor(group_ids)
    parents = torch.tensor(parent_ids)
    n = len(group_ids)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    same = groups[None, :] == groups[:, None]
    parent = groups[None, :] == parents[:, None]
    return causal & (same | parent)


def adapter_files_present(directory):
    return all(os.path.exists(os.path.join(directory, name)) for name in ("adapter_config.json", "adapter_model.safetensors"))


def read_json(path):
    with open(path) as handle:
        return json.load(handle)
