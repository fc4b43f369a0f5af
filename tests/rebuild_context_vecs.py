#!/usr/bin/python3
"""Rebuilds a module lesson's context_vecs from its --json document alone, as a NumPy user would: the
inputs, the config and the parameter steps ("mha.W_query.weight", ...). Prints the largest absolute
difference from the document's own context_vecs. tests/test_docs.cpp (the JSON round trip) runs it.

    attn mha --json | /usr/bin/python3 tests/rebuild_context_vecs.py
"""
import json
import sys

import numpy as np

doc = json.load(sys.stdin)
P = {s["id"]: np.array(s["data"], dtype=np.float32) for s in doc["steps"]}
cfg = doc["config"]
x = np.array(doc["inputs"]["embeddings"], dtype=np.float32)   # (num_tokens, d_in)
b, n = cfg["batch"], x.shape[0]
X = np.stack([x] * b)                                          # (b, num_tokens, d_in)


def linear(t, name):  # nn.Linear: t @ weight.T + bias
    y = t @ P[name + ".weight"].T
    return y + P[name + ".bias"] if name + ".bias" in P else y


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def causal_attention(q, k, v):  # (..., num_tokens, head_dim) each
    scores = q @ np.swapaxes(k, -1, -2)
    scores = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, scores)
    return softmax(scores / np.sqrt(np.float32(k.shape[-1]))) @ v


lesson = doc["lesson"]
if lesson == "causal":
    out = causal_attention(linear(X, "ca.W_query"), linear(X, "ca.W_key"), linear(X, "ca.W_value"))
elif lesson == "mha-wrapper":
    heads = [f"mha.heads.{h}" for h in range(cfg["heads"])]
    out = np.concatenate([causal_attention(linear(X, p + ".W_query"), linear(X, p + ".W_key"), linear(X, p + ".W_value"))
                          for p in heads], axis=-1)
elif lesson in ("mha", "gqa"):
    H, d_out = cfg["heads"], cfg["d_out"]
    G, hd = cfg.get("kv_groups", H), d_out // H

    def split(y, k):  # (b, num_tokens, k * head_dim) -> (b, k, num_tokens, head_dim)
        return y.reshape(b, n, k, hd).transpose(0, 2, 1, 3)

    q = split(linear(X, lesson + ".W_query"), H)
    k = np.repeat(split(linear(X, lesson + ".W_key"), G), H // G, axis=1)    # repeat_interleave
    v = np.repeat(split(linear(X, lesson + ".W_value"), G), H // G, axis=1)
    context = causal_attention(q, k, v).transpose(0, 2, 1, 3).reshape(b, n, d_out)
    out = linear(context, lesson + ".out_proj")
else:
    sys.exit(f"no module lesson: {lesson}")
print(float(np.abs(out - P["context_vecs"]).max()))
