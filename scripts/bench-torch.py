#!/usr/bin/python3
"""PyTorch's side of `attn bench`: the same causal multi-head self-attention forward, float32, timed the
same way (one warm-up, then the median of --repeats runs), so docs/performance.md can set attn's figures
beside PyTorch's on the same machine.

    /usr/bin/python3 scripts/bench-torch.py [--batch 8 --tokens 1024 --dim 768 --heads 12 --repeats 5]

Needs Debian's python3-torch (PyTorch 1.13, CPU). Not part of the build or the tests.

It times three implementations:
  wrapper    the chapter's MultiHeadAttentionWrapper (3.6.1) of CausalAttention heads, then a d_out x d_out
             projection, as `attn bench`'s wrapper row does
  mha        the chapter's MultiHeadAttention (3.6.2)
  torch_mha  torch.nn.MultiheadAttention with a causal attn_mask, need_weights=False (PyTorch's own
             module, the fast path PyTorch offers in 1.13)
Weights are PyTorch's defaults after torch.manual_seed(123); inputs torch.rand after manual_seed(0).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
import generate  # noqa: E402  the book's modules, as the golden data use them


class Wrapper(nn.Module):
    # Book section 3.6.1 (dropout 0: the identity in eval mode), with the output projection attn bench's
    # wrapper row applies too.
    def __init__(self, d_in, d_out, context_length, num_heads):
        super().__init__()
        self.wrapper = generate.MultiHeadAttentionWrapper(d_in, d_out // num_heads, context_length, 0.0, num_heads)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        return self.out_proj(self.wrapper(x))


class MultiHeadAttention(generate.MultiHeadAttention):
    # Book section 3.6.2: the golden generator's module (its __init__, its weights), with the book's plain
    # forward, dropout left out: the generator's forward also records every step, which would time 384 MB
    # of extra copies.
    def __init__(self, d_in, d_out, context_length, num_heads):
        super().__init__(d_in, d_out, context_length, 0.0, num_heads)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class TorchMHA(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_out, num_heads, bias=False, batch_first=True)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        n = x.shape[1]
        return self.mha(x, x, x, attn_mask=self.mask[:n, :n], need_weights=False)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(0)
    x = torch.rand(a.batch, a.tokens, a.dim)
    rows = []
    for name, cls in (("wrapper", Wrapper), ("mha", MultiHeadAttention), ("torch_mha", TorchMHA)):
        torch.manual_seed(123)
        module = cls(a.dim, a.dim, a.tokens, a.heads).eval()  # eval: lets nn.MultiheadAttention take its fast path
        with torch.no_grad():
            module(x)  # warm-up
            times = []
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                module(x)
                times.append(time.perf_counter() - t0)
        rows.append({"impl": name, "median_s": statistics.median(times), "times_s": times})

    if a.json:
        print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                          "config": vars(a), "results": rows}, indent=2))
        return
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, batch {a.batch} x {a.tokens} tokens"
          f" x {a.dim} dims x {a.heads} heads, median of {a.repeats} after a warm-up")
    for r in rows:
        print(f"{r['impl']:<10} {r['median_s'] * 1e3:10.1f} ms")


if __name__ == "__main__":
    main()
