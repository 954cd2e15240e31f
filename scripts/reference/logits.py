#!/usr/bin/env python3
"""Reference logits for the fixture models, computed by Hugging Face transformers itself.

The TypeScript engine's forward pass (src/engine/model/reference.test.ts) is checked against the
values this script writes to src/engine/model/testdata/reference-logits.json. Each fixture is
loaded with `AutoModelForCausalLM.from_pretrained` from the directory `flywheel models make-tiny`
wrote (llama, qwen2, qwen3; 16-bit checkpoints are upcast to float32 on load, so the math is float32
on both sides), with eager attention, and run on fixed prompts on the CPU.

Regenerate (the environment is made on first use by scripts/python/env.mjs):

    npm run reference:regenerate

For every case it records the digest of the fixture's weights (the test regenerates the fixture
and checks the digest, so both sides ran the same model) and the float32 logits of the listed
positions, as base64 of little-endian float32, row by row. Regenerate whenever the fixture
generator changes on purpose (the test reports a digest mismatch).
"""

import os
import sys
import tempfile

import torch
import transformers

from fixtures import ROOT, f32_base64, make_fixture, weights_digest, write_json

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
    {"name": "llama-f16", "args": ["--arch", "llama", "--seed", "1", "--dtype", "f16"],
     "prompts": [(PROMPT_B, None)]},
    {"name": "qwen2-bf16", "args": ["--arch", "qwen2", "--seed", "2", "--dtype", "bf16"],
     "prompts": [(PROMPT_B, None)]},
]


def load(directory):
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32, attn_implementation="eager")
    return model.eval()


@torch.no_grad()
def logits_of(model, ids):
    return model(input_ids=torch.tensor([ids])).logits[0]


def main():
    torch.set_num_threads(1)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in CASES:
            directory = os.path.join(scratch, case["name"])
            make_fixture(case["args"], directory)
            model = load(directory)
            prompts = []
            for ids, last_rows in case["prompts"]:
                logits = logits_of(model, ids)
                first = 0 if last_rows is None else len(ids) - last_rows
                prompts.append({"tokens": ids, "firstPosition": first, "logitsF32Base64": f32_base64(logits[first:])})
            results.append({
                "name": case["name"],
                "makeTinyArgs": case["args"],
                "weightsDigest": weights_digest(directory),
                "vocabSize": model.config.vocab_size,
                "prompts": prompts,
            })
            print(f"{case['name']}: {len(prompts)} prompts", file=sys.stderr)
    write_json(OUTPUT, {
        "generator": "scripts/reference/logits.py (Hugging Face transformers)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cases": results,
    })


if __name__ == "__main__":
    main()
