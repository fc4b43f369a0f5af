#!/usr/bin/python3
"""attn --model at GPT-2 small's size: loading plus the forward to layer 11 on a 20-token text, warm.

    python3 scripts/bench-gpt2.py [path/to/attn]     (default: build/attn; RUNS=10 by default)

It writes a GPT-2-small-shaped model with random weights (124M parameters, float32, about 500 MB) to a
temporary directory (never committed, deleted at the end), as Hugging Face lays it out: config.json,
model.safetensors, and the tokenizer files (attn's own data/gpt2 files under Hugging Face's names). Then it
times whole `attn` processes, after one warm-up run that brings the file into the page cache:
  - `attn simple --model DIR --layer 11 --step norm1_x`: load, tokenize, 11 blocks, block 11's norm1;
  - `attn mha --model DIR --layer 11 --step top5_token_ids`: the same, then the last block, the final norm
    and the 50,257-row output head.
The target (issue 14) is well under a second each on two cores. NumPy only; no PyTorch.
"""
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "The quick brown fox jumps over the lazy dog while the students watch attention work in class again and again"
E, HEADS, LAYERS, CTX, VOCAB = 768, 12, 12, 1024, 50257


def tensors():
    yield "wte.weight", (VOCAB, E)
    yield "wpe.weight", (CTX, E)
    for i in range(LAYERS):
        h = f"h.{i}."
        yield from [(h + "ln_1.weight", (E,)), (h + "ln_1.bias", (E,)), (h + "attn.c_attn.weight", (E, 3 * E)),
                    (h + "attn.c_attn.bias", (3 * E,)), (h + "attn.c_proj.weight", (E, E)),
                    (h + "attn.c_proj.bias", (E,)), (h + "ln_2.weight", (E,)), (h + "ln_2.bias", (E,)),
                    (h + "mlp.c_fc.weight", (E, 4 * E)), (h + "mlp.c_fc.bias", (4 * E,)),
                    (h + "mlp.c_proj.weight", (4 * E, E)), (h + "mlp.c_proj.bias", (E,))]
    yield "ln_f.weight", (E,)
    yield "ln_f.bias", (E,)


def write_model(d):
    rng = np.random.default_rng(0)
    header, offset, shapes = {}, 0, list(tensors())
    for name, shape in shapes:
        n = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in shapes:
            if name.endswith((".weight",)) and len(shape) == 1:  # LayerNorm scales
                a = np.ones(shape, dtype=np.float32)
            else:
                a = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
            f.write(a.tobytes())
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "vocab_size": VOCAB, "n_positions": CTX, "n_embd": E, "n_layer": LAYERS,
                   "n_head": HEADS, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}, f)
    shutil.copy(os.path.join(ROOT, "data", "gpt2", "encoder.json"), os.path.join(d, "vocab.json"))
    shutil.copy(os.path.join(ROOT, "data", "gpt2", "vocab.bpe"), os.path.join(d, "merges.txt"))


def main():
    attn = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attn")
    runs = int(os.environ.get("RUNS", "10"))
    d = tempfile.mkdtemp(prefix="attn-gpt2-bench-")
    try:
        t0 = time.perf_counter()
        write_model(d)
        print(f"wrote a random 124M GPT-2 to {d} in {time.perf_counter() - t0:.1f} s")
        tokens = json.loads(subprocess.run([attn, "simple", "--model", d, "--text", TEXT, "--json", "--step",
                                            "token_ids"], capture_output=True, check=True, text=True).stdout)
        print(f"text: {len(tokens['inputs']['tokens'])} tokens")
        for label, args in (("load + blocks 0-10 + norm1 (simple --layer 11)", ["simple", "--step", "norm1_x"]),
                            ("... + block 11, final norm, output head (mha --layer 11, top 5)",
                             ["mha", "--step", "top5_token_ids"])):
            cmd = [attn, args[0], "--model", d, "--text", TEXT, "--layer", "11", "--json"] + args[1:]
            subprocess.run(cmd, capture_output=True, check=True)  # warm-up: the page cache
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True)
                times.append(time.perf_counter() - t)
            print(f"{label}: median {1000 * statistics.median(times):.0f} ms, "
                  f"min {1000 * min(times):.0f} ms over {runs} runs")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
