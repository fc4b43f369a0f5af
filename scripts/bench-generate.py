#!/usr/bin/python3
"""attn generate against the book's own run in PyTorch, side by side (issue 48's speed point).

    OPENBLAS_CORETYPE=SkylakeX python3 scripts/bench-generate.py [path/to/attn]   (default build/attn; RUNS=5)

Each run is a whole process, timed from start to exit, alternating between the two:
  - attn generate: GPT_CONFIG_124M built from torch.manual_seed(123) (163,009,536 parameters), then
    generate_text_simple for six tokens from "Hello, I am" in eval mode;
  - PyTorch (python3 with torch, e.g. Debian's python3-torch): the book's cells of 4.6 and 4.7 as one
    script: import torch, manual_seed(123), GPTModel(GPT_CONFIG_124M), model(batch) in train mode (4.6's
    forward, which the book runs before generating), model.eval() and the six greedy tokens. The book's
    classes are tests/golden/gpt2_models.py's.
attn's side does not run 4.6's forward (the issue times the book's run as it is: init, forward, six tokens);
PyTorch spends about 0.14 s of its time on it. Both print the same ids (the script checks), and it prints
each side's median and their ratio. The target:
attn at most a third of PyTorch's time. Nothing here is part of the test suite.
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOK_IDS = [15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]
TORCH_RUN = r"""
import sys
sys.path.insert(0, {golden!r})
import torch
from gpt2_models import GPTModel
cfg = {{"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
        "drop_rate": 0.1, "qkv_bias": False}}
torch.manual_seed(123)
model = GPTModel(cfg)
out = model(torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]]))
model.eval()
idx = torch.tensor([[15496, 11, 314, 716]])
for _ in range(6):
    with torch.no_grad():
        logits = model(idx[:, -1024:])[:, -1, :]
    idx = torch.cat((idx, torch.argmax(torch.softmax(logits, dim=-1), dim=-1, keepdim=True)), dim=1)
print(idx[0].tolist())
"""


def timed(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def main():
    attn = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attn")
    runs = int(os.environ.get("RUNS", "5"))
    python = os.environ.get("PYTHON", "/usr/bin/python3")
    script = TORCH_RUN.format(golden=os.path.join(ROOT, "tests", "golden"))
    attn_cmd = [attn, "generate", "--step", "out", "--json"]
    torch_cmd = [python, "-c", script]
    # Warm-up: both binaries and their libraries in the page cache, and the ids checked.
    _, out = timed(attn_cmd)
    assert [int(i) for i in json.loads(out)["steps"][0]["data"][0]] == BOOK_IDS, out[:400]
    _, out = timed(torch_cmd)
    assert out.strip() == str(BOOK_IDS), out
    attn_times, torch_times = [], []
    for _ in range(runs):
        attn_times.append(timed(attn_cmd)[0])
        torch_times.append(timed(torch_cmd)[0])
    a, t = statistics.median(attn_times), statistics.median(torch_times)
    print(f"attn generate      median {a:.2f} s  ({', '.join(f'{x:.2f}' for x in attn_times)})")
    print(f"PyTorch (the book) median {t:.2f} s  ({', '.join(f'{x:.2f}' for x in torch_times)})")
    print(f"attn / PyTorch: {a / t:.2f} (target at most 0.33)")


if __name__ == "__main__":
    main()
