#!/usr/bin/env python3
"""Reference logits for the fixture models, from a plain PyTorch implementation.

The TypeScript engine's forward pass (src/engine/model/) is checked against the values this script
writes to src/engine/model/testdata/reference-logits.json. The script is written independently of
the TypeScript code, from the semantics of Hugging Face transformers' modeling_llama.py,
modeling_qwen2.py and modeling_qwen3.py (RMSNorm in f32, rotate-half RoPE with Llama 3.1 frequency
scaling, grouped-query attention with a causal mask and an f32 softmax, SwiGLU MLP, qwen2's q/k/v
biases, qwen3's per-head q/k RMSNorm, tied embeddings). It reads the checkpoint files directly:
config.json and safetensors (an 8-byte little-endian header length, a JSON header, raw data).

How the committed values were made (transformers cannot be installed on the build machine, so
PyTorch from Debian is used, run with the system interpreter):

    apt-get install -y python3-torch
    /usr/bin/python3 scripts/reference/logits.py

Run it from anywhere inside the repository, after `npm ci`. For every case below it writes the
fixture with `flywheel models make-tiny` (from source, via tsx) into a temporary directory, records
the digest of its weights (sha256 over each tensor's name, dtype, shape and bytes in name order, as
CheckpointTensors.digest() computes it) and the f32 logits of fixed prompts, then writes the JSON
file. Logits are stored as base64 of little-endian float32, row by row, for the listed positions.
Regenerate whenever the fixture generator changes on purpose (the test reports a digest mismatch).
"""

import base64
import hashlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUTPUT = os.path.join(ROOT, "src", "engine", "model", "testdata", "reference-logits.json")

PROMPT_A = [562, 305, 259, 10, 429, 44, 516, 302]
PROMPT_B = [0, 17, 255, 256, 400, 570, 575, 3, 99, 128, 33]
# A longer prompt makes distant positions attend to each other, where RoPE's low frequencies (and
# llama3's scaling of them) matter; only its last rows are stored.
PROMPT_LONG = [(i * 37 + 11) % 560 for i in range(96)]

CASES = [
    {"name": "llama-f32", "args": ["--arch", "llama", "--seed", "1"],
     "prompts": [(PROMPT_A, None), (PROMPT_B, None), (PROMPT_LONG, 4)]},
    {"name": "qwen2-f32", "args": ["--arch", "qwen2", "--seed", "2"],
     "prompts": [(PROMPT_A, None), (PROMPT_B, None), (PROMPT_LONG, 4)]},
    {"name": "qwen3-f32", "args": ["--arch", "qwen3", "--seed", "3"],
     "prompts": [(PROMPT_A, None), (PROMPT_B, None), (PROMPT_LONG, 4)]},
    # 16-bit checkpoints: the weights are decoded by PyTorch, the math stays f32.
    {"name": "llama-f16", "args": ["--arch", "llama", "--seed", "1", "--dtype", "f16"],
     "prompts": [(PROMPT_B, None)]},
    {"name": "qwen2-bf16", "args": ["--arch", "qwen2", "--seed", "2", "--dtype", "bf16"],
     "prompts": [(PROMPT_B, None)]},
]

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


# --- checkpoint files -------------------------------------------------------------------------

def read_safetensors(path):
    """Returns {name: (dtype, shape, raw bytes)}."""
    with open(path, "rb") as handle:
        (header_length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_length))
        data = handle.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    return tensors


def read_checkpoint(directory):
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if not os.path.exists(index_path):
        return read_safetensors(os.path.join(directory, "model.safetensors"))
    with open(index_path) as handle:
        weight_map = json.load(handle)["weight_map"]
    tensors = {}
    for file_name in sorted(set(weight_map.values())):
        tensors.update(read_safetensors(os.path.join(directory, file_name)))
    return tensors


def weights_digest(tensors):
    digest = hashlib.sha256()
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        digest.update(f"{name}\n{dtype}\n{','.join(str(d) for d in shape)}\n".encode())
        digest.update(raw)
    return digest.hexdigest()


def to_f32(entry):
    dtype, shape, raw = entry
    flat = torch.frombuffer(bytearray(raw), dtype=DTYPES[dtype])
    return flat.to(torch.float32).reshape(shape)


# --- the model ------------------------------------------------------------------------------------

def rms_norm(x, weight, eps):
    x = x.to(torch.float32)
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def inverse_frequencies(config, head_dim):
    parameters = config.get("rope_parameters") or {}
    theta = parameters.get("rope_theta", config.get("rope_theta", 10000.0))
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).to(torch.float32) / head_dim
    inv_freq = 1.0 / (theta ** exponents)
    scaling = config.get("rope_scaling") or parameters
    kind = scaling.get("rope_type", scaling.get("type", "default")) if scaling else "default"
    if kind == "default":
        return inv_freq
    assert kind == "llama3", kind
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    context = scaling["original_max_position_embeddings"]
    low_wavelength = context / low
    high_wavelength = context / high
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = (context / wavelength - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return torch.where(medium, smoothed, scaled)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Reference:
    def __init__(self, directory):
        with open(os.path.join(directory, "config.json")) as handle:
            self.config = json.load(handle)
        self.tensors = read_checkpoint(directory)
        c = self.config
        self.kind = c["model_type"]
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads") or self.heads
        self.head_dim = c.get("head_dim") or c["hidden_size"] // self.heads
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.inv_freq = inverse_frequencies(c, self.head_dim)

    def weight(self, name):
        return to_f32(self.tensors[name])

    def maybe(self, name):
        return self.weight(name) if name in self.tensors else None

    def linear(self, x, prefix, bias):
        out = x @ self.weight(prefix + ".weight").T
        return out + self.weight(prefix + ".bias") if bias else out

    def attention(self, x, layer, cos, sin):
        c = self.config
        base = f"model.layers.{layer}.self_attn"
        qkv_bias = self.kind == "qwen2" or c.get("attention_bias", False)
        out_bias = self.kind != "qwen2" and c.get("attention_bias", False)
        length = x.shape[0]
        q = self.linear(x, base + ".q_proj", qkv_bias).view(length, self.heads, self.head_dim)
        k = self.linear(x, base + ".k_proj", qkv_bias).view(length, self.kv_heads, self.head_dim)
        v = self.linear(x, base + ".v_proj", qkv_bias).view(length, self.kv_heads, self.head_dim)
        if self.kind == "qwen3":
            q = rms_norm(q, self.weight(base + ".q_norm.weight"), self.eps)
            k = rms_norm(k, self.weight(base + ".k_norm.weight"), self.eps)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [heads, length, dim]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=0)
        v = v.repeat_interleave(group, dim=0)
        scores = (q @ k.transpose(1, 2)) * self.head_dim ** -0.5
        mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        weights = torch.softmax(scores + mask, dim=-1, dtype=torch.float32)
        attended = (weights @ v).transpose(0, 1).reshape(length, self.heads * self.head_dim)
        return self.linear(attended, base + ".o_proj", out_bias)

    def mlp(self, x, layer):
        base = f"model.layers.{layer}.mlp"
        bias = self.kind == "llama" and self.config.get("mlp_bias", False)
        gate = self.linear(x, base + ".gate_proj", bias)
        up = self.linear(x, base + ".up_proj", bias)
        return self.linear(torch.nn.functional.silu(gate) * up, base + ".down_proj", bias)

    @torch.no_grad()
    def logits(self, ids):
        c = self.config
        positions = torch.arange(len(ids), dtype=torch.float32)
        angles = torch.outer(positions, self.inv_freq)
        table = torch.cat((angles, angles), dim=-1)
        cos, sin = table.cos(), table.sin()
        x = self.weight("model.embed_tokens.weight")[torch.tensor(ids)]
        for layer in range(c["num_hidden_layers"]):
            base = f"model.layers.{layer}"
            x = x + self.attention(rms_norm(x, self.weight(base + ".input_layernorm.weight"), self.eps), layer, cos, sin)
            x = x + self.mlp(rms_norm(x, self.weight(base + ".post_attention_layernorm.weight"), self.eps), layer)
        x = rms_norm(x, self.weight("model.norm.weight"), self.eps)
        head = self.weight("model.embed_tokens.weight") if c.get("tie_word_embeddings") else self.weight("lm_head.weight")
        return x @ head.T


# --- driver ---------------------------------------------------------------------------------------

def make_fixture(args, directory):
    command = ["node", "--import", "tsx", os.path.join("src", "cli", "main.ts"), "models", "make-tiny", *args, "--out", directory]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def encode_rows(logits):
    flat = logits.to(torch.float32).contiguous().view(-1).tolist()
    return base64.b64encode(struct.pack(f"<{len(flat)}f", *flat)).decode("ascii")


def main():
    torch.set_num_threads(1)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in CASES:
            directory = os.path.join(scratch, case["name"])
            make_fixture(case["args"], directory)
            model = Reference(directory)
            prompts = []
            for ids, last_rows in case["prompts"]:
                logits = model.logits(ids)
                first = 0 if last_rows is None else len(ids) - last_rows
                prompts.append({
                    "tokens": ids,
                    "firstPosition": first,
                    "logitsF32Base64": encode_rows(logits[first:]),
                })
            results.append({
                "name": case["name"],
                "makeTinyArgs": case["args"],
                "weightsDigest": weights_digest(model.tensors),
                "vocabSize": model.config["vocab_size"],
                "prompts": prompts,
            })
            print(f"{case['name']}: {len(prompts)} prompts", file=sys.stderr)
    document = {
        "generator": "scripts/reference/logits.py",
        "torch": torch.__version__,
        "cases": results,
    }
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
