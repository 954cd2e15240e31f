"""Helpers the reference scripts share: writing a fixture model with `flywheel models make-tiny`,
the digest of its weights, and float32 arrays as base64.

The digest is sha256 over each tensor's name, dtype, shape and raw bytes in name order, as
CheckpointTensors.digest() computes it, so a test can tell that it regenerated the same weights.
"""

import base64
import hashlib
import json
import os
import struct
import subprocess

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def make_fixture(args, directory):
    """Writes the fixture with the project's own CLI (from source, via tsx)."""
    command = ["node", "--import", "tsx", os.path.join("src", "cli", "main.ts"), "models", "make-tiny", *args, "--out", directory]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def _safetensors_entries(path):
    """{name: (dtype, shape, raw bytes)} of one safetensors file, read as the format defines it."""
    with open(path, "rb") as handle:
        (header_length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_length))
        data = handle.read()
    entries = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        entries[name] = (info["dtype"], info["shape"], data[begin:end])
    return entries


def weights_digest(directory):
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as handle:
            files = sorted(set(json.load(handle)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    entries = {}
    for file_name in files:
        entries.update(_safetensors_entries(os.path.join(directory, file_name)))
    digest = hashlib.sha256()
    for name in sorted(entries):
        dtype, shape, raw = entries[name]
        digest.update(f"{name}\n{dtype}\n{','.join(str(d) for d in shape)}\n".encode())
        digest.update(raw)
    return digest.hexdigest()


def f32_base64(values):
    """Little-endian float32 bytes of a tensor or array (rounded once from whatever precision), as base64."""
    array = np.asarray(values.detach().cpu().double().numpy() if hasattr(values, "detach") else values, dtype=np.float64)
    return base64.b64encode(array.astype("<f4").tobytes()).decode("ascii")


def write_json(path, document):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
