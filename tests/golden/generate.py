#!/usr/bin/python3
"""Golden data for attn's lessons, computed by PyTorch itself with the book's own code.

Run with Debian's python3-torch (PyTorch 1.13, CPU, no MKL):

    /usr/bin/python3 tests/golden/generate.py

It writes tests/golden/inputs/* (embeddings files of 1-12 tokens and d_in 1-16) and
tests/golden/lessons.json: for every configuration, the lesson, its command-line arguments and every
step's shape and data. tests/test_golden.cpp runs the same arguments through attn and requires the
same step ids, shapes and values within 1e-5. The test suite never needs PyTorch; rerun this only
when a lesson gains steps or configurations.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
INPUT_DIR = os.path.join(HERE, "inputs")
BOOK_TOKENS = ["Your", "journey", "starts", "with", "one", "step"]
BOOK_INPUTS = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
               [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]


# ---------------------------------------------------------------------------------------------
# The book's modules (ch03.ipynb), unchanged but for comments.

class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        return attn_weights @ values


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        return attn_weights @ values


# ---------------------------------------------------------------------------------------------
# The lessons: the book's cells in order, every printed (or printable) tensor recorded as a step.

def default_query(inputs, query):
    if query is not None:
        return query
    return 1 if inputs.shape[0] > 1 else 0


def lesson_simple(inputs, query=None):
    q = default_query(inputs, query)
    steps = {"inputs": inputs}
    query_vec = inputs[q]
    steps["query"] = query_vec
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_2[i] = torch.dot(x_i, query_vec)
    steps["attn_scores_2"] = attn_scores_2
    attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
    steps["attn_weights_2_tmp"] = attn_weights_2_tmp
    steps["attn_weights_2_tmp_sum"] = attn_weights_2_tmp.sum()

    def softmax_naive(x):
        return torch.exp(x) / torch.exp(x).sum(dim=0)
    attn_weights_2_naive = softmax_naive(attn_scores_2)
    steps["attn_weights_2_naive"] = attn_weights_2_naive
    steps["attn_weights_2_naive_sum"] = attn_weights_2_naive.sum()
    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    steps["attn_weights_2"] = attn_weights_2
    steps["attn_weights_2_sum"] = attn_weights_2.sum()
    context_vec_2 = torch.zeros(query_vec.shape)
    for i, x_i in enumerate(inputs):
        context_vec_2 += attn_weights_2[i] * x_i
    steps["context_vec_2"] = context_vec_2
    return steps


def lesson_all_tokens(inputs):
    steps = {"inputs": inputs}
    n = inputs.shape[0]
    attn_scores = torch.empty(n, n)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    steps["attn_scores_loop"] = attn_scores
    attn_scores = inputs @ inputs.T
    steps["attn_scores"] = attn_scores
    attn_weights = torch.softmax(attn_scores, dim=-1)
    steps["attn_weights"] = attn_weights
    steps["all_row_sums"] = attn_weights.sum(dim=-1)
    steps["all_context_vecs"] = attn_weights @ inputs
    return steps


def lesson_trainable(inputs, d_out=2, seed=None, qkv_bias=False, query=None):
    q = default_query(inputs, query)
    seed_w, seed_v1, seed_v2 = (123, 123, 789) if seed is None else (seed, seed, seed)
    steps = {}
    x_2 = inputs[q]
    steps["x_2"] = x_2
    d_in = inputs.shape[1]
    torch.manual_seed(seed_w)
    W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_key = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_value = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    steps["W_query"], steps["W_key"], steps["W_value"] = W_query, W_key, W_value
    steps["query_2"] = x_2 @ W_query
    steps["key_2"] = x_2 @ W_key
    steps["value_2"] = x_2 @ W_value
    query_2 = steps["query_2"]
    keys = inputs @ W_key
    values = inputs @ W_value
    steps["keys"], steps["values"] = keys, values
    keys_2 = keys[q]
    steps["attn_score_22"] = query_2.dot(keys_2)
    attn_scores_2 = query_2 @ keys.T
    steps["attn_scores_2"] = attn_scores_2
    d_k = keys.shape[1]
    attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
    steps["attn_weights_2"] = attn_weights_2
    steps["context_vec_2"] = attn_weights_2 @ values
    torch.manual_seed(seed_v1)
    sa_v1 = SelfAttention_v1(d_in, d_out)
    steps["sa_v1_output"] = sa_v1(inputs)
    torch.manual_seed(seed_v2)
    sa_v2 = SelfAttention_v2(d_in, d_out, qkv_bias=qkv_bias)
    steps["sa_v2_output"] = sa_v2(inputs)
    return steps


# ---------------------------------------------------------------------------------------------
# Input files and configurations.

def write_inputs():
    """Embeddings files of assorted sizes, values rounded to 4 decimals so the files stay short."""
    gen = torch.Generator().manual_seed(20261122)
    files = {}
    specs = [("one_token", 1, 3, "json", True), ("two_tokens_d1", 2, 1, "json", False),
             ("four_d5", 4, 5, "json", True), ("seven_d8", 7, 8, "json", False),
             ("twelve_d16", 12, 16, "json", True), ("three_d16", 3, 16, "json", False),
             ("eight_d2", 8, 2, "csv", True), ("five_d4", 5, 4, "csv", False),
             ("ten_d12", 10, 12, "json", False), ("negative_d6", 6, 6, "json", True)]
    for name, n, d, kind, with_tokens in specs:
        values = (torch.rand(n, d, generator=gen) * 2 - 1) if name.startswith("negative") \
            else torch.rand(n, d, generator=gen)
        rows = [[round(float(v), 4) for v in row] for row in values]
        tokens = [f"tok{i}" for i in range(n)] if with_tokens else None
        path = os.path.join(INPUT_DIR, f"{name}.{kind}")
        with open(path, "w") as f:
            if kind == "json":
                doc = {"tokens": tokens, "embeddings": rows} if tokens else {"embeddings": rows}
                f.write(json.dumps(doc) + "\n")
            else:
                for i, row in enumerate(rows):
                    cells = ([tokens[i]] if tokens else []) + [repr(v) for v in row]
                    f.write(",".join(cells) + "\n")
        files[f"{name}.{kind}"] = (torch.tensor(rows), tokens)
    return files


def configurations():
    """(lesson, args, input file or None, kwargs of the Python lesson)."""
    c = [
        ("simple", [], None, {}),
        ("simple", ["--query", "0"], None, {"query": 0}),
        ("simple", ["--query", "5"], None, {"query": 5}),
        ("all-tokens", [], None, {}),
        ("trainable", [], None, {}),
        ("trainable", ["--seed", "123"], None, {"seed": 123}),
        ("trainable", ["--seed", "0"], None, {"seed": 0}),
        ("trainable", ["--seed", "4294967295"], None, {"seed": 4294967295}),
        ("trainable", ["--d-out", "1"], None, {"d_out": 1}),
        ("trainable", ["--d-out", "7", "--seed", "42"], None, {"d_out": 7, "seed": 42}),
        ("trainable", ["--qkv-bias"], None, {"qkv_bias": True}),
        ("trainable", ["--qkv-bias", "--seed", "2024", "--d-out", "3"], None,
         {"qkv_bias": True, "seed": 2024, "d_out": 3}),
        ("trainable", ["--query", "4"], None, {"query": 4}),
        ("trainable", ["--query", "0", "--d-out", "16"], None, {"query": 0, "d_out": 16}),
    ]
    per_file = {
        "one_token.json": [("simple", [], {}), ("all-tokens", [], {}), ("trainable", [], {})],
        "two_tokens_d1.json": [("simple", [], {}), ("all-tokens", [], {}),
                               ("trainable", ["--d-out", "1"], {"d_out": 1})],
        "four_d5.json": [("simple", ["--query", "3"], {"query": 3}),
                         ("trainable", ["--seed", "7", "--qkv-bias"], {"seed": 7, "qkv_bias": True})],
        "seven_d8.json": [("all-tokens", [], {}), ("trainable", ["--d-out", "4"], {"d_out": 4})],
        "twelve_d16.json": [("simple", ["--query", "11"], {"query": 11}), ("all-tokens", [], {}),
                            ("trainable", ["--d-out", "8", "--seed", "99"], {"d_out": 8, "seed": 99})],
        "three_d16.json": [("trainable", ["--qkv-bias", "--d-out", "5"], {"qkv_bias": True, "d_out": 5})],
        "eight_d2.csv": [("simple", [], {}), ("trainable", ["--seed", "31337"], {"seed": 31337})],
        "five_d4.csv": [("all-tokens", [], {}), ("trainable", ["--query", "2", "--d-out", "3"],
                                                 {"query": 2, "d_out": 3})],
        "ten_d12.json": [("trainable", ["--seed", "5", "--d-out", "12", "--qkv-bias"],
                          {"seed": 5, "d_out": 12, "qkv_bias": True})],
        "negative_d6.json": [("simple", ["--query", "2"], {"query": 2}), ("all-tokens", [], {}),
                             ("trainable", ["--seed", "1"], {"seed": 1})],
    }
    for file, runs in per_file.items():
        for lesson, args, kwargs in runs:
            c.append((lesson, args, file, kwargs))
    return c


LESSONS = {"simple": lesson_simple, "all-tokens": lesson_all_tokens, "trainable": lesson_trainable}


def encode(t):
    t = t.detach().to(torch.float32).contiguous()
    out = []
    for v in t.reshape(-1).tolist():
        out.append(v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")))
    return {"shape": list(t.shape), "data": out}


def bits(t):
    """float32 tensor -> its elements' bit patterns, row-major, so tests can require exact equality."""
    import struct
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in t.detach().reshape(-1).tolist()]


def rng_cases():
    """torch.rand and nn.Linear's init, bit for bit, for assorted seeds and shapes."""
    cases = []
    for seed in [0, 1, 123, 789, 2**31 - 1, 2**32 - 1, 2**32 + 5, 2**63 + 12345]:
        torch.manual_seed(seed)
        first = torch.rand(3, 5)
        after = torch.rand(4)
        linears = []
        for d_in, d_out, bias in [(3, 2, False), (5, 3, True), (768, 4, True), (1, 1, True), (16, 7, False)]:
            layer = nn.Linear(d_in, d_out, bias=bias)
            linears.append({"in": d_in, "out": d_out, "bias": bias, "weight_bits": bits(layer.weight),
                            "bias_bits": bits(layer.bias) if bias else []})
        cases.append({"seed": str(seed), "rand_3x5_bits": bits(first), "rand_4_bits": bits(after),
                      "linears": linears})
    return cases


def main():
    if torch.backends.mkl.is_available():
        sys.exit("generate.py wants a PyTorch build without MKL (Debian's python3-torch): dropout masks differ")
    os.makedirs(INPUT_DIR, exist_ok=True)
    files = write_inputs()
    cases = []
    for lesson, args, file, kwargs in configurations():
        if file is None:
            inputs = torch.tensor(BOOK_INPUTS)
        else:
            inputs = files[file][0]
        steps = LESSONS[lesson](inputs, **kwargs)
        cases.append({
            "lesson": lesson,
            "args": args + (["--input", "inputs/" + file] if file else []),
            "steps": [dict(id=k, **encode(v)) for k, v in steps.items()],
        })
    with open(os.path.join(HERE, "lessons.json"), "w") as f:
        json.dump({"generator": "tests/golden/generate.py", "torch": torch.__version__, "cases": cases}, f)
        f.write("\n")
    print(f"{len(cases)} configurations written to tests/golden/lessons.json")
    with open(os.path.join(HERE, "rng.json"), "w") as f:
        json.dump({"generator": "tests/golden/generate.py", "torch": torch.__version__, "cases": rng_cases()}, f)
        f.write("\n")
    print("torch.rand and nn.Linear bits written to tests/golden/rng.json")


if __name__ == "__main__":
    main()
