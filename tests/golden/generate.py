#!/usr/bin/python3
"""Golden data for attn's lessons, computed by PyTorch itself with the book's own code.

Run with Debian's python3-torch (PyTorch 1.13, CPU, no MKL):

    /usr/bin/python3 tests/golden/generate.py
    /usr/bin/python3 tests/golden/generate.py --heads-only   # attn heads' configurations alone
    /usr/bin/python3 tests/golden/generate.py --chapter4-only   # chapter 4's (tests/golden/chapter4.py) alone


It writes tests/golden/inputs/* (embeddings files of 1-12 tokens and d_in 1-16) and
tests/golden/lessons/ (golden_store.py): for every configuration, the lesson, its command-line arguments
and every step's shape and data, one file each. tests/test_golden.cpp runs the same arguments through attn and requires the
same step ids, shapes and values within 1e-5. The test suite never needs PyTorch; rerun this only
when a lesson gains steps or configurations.

Sums of products come out of OpenBLAS, and its kernels for different CPUs add in different orders: a few
steps end in other last bits on AVX2 (Haswell, Zen) kernels than on AVX-512 (SkylakeX) ones, in PyTorch
as in attn. The "data" here are SkylakeX's; run this on an AVX-512 CPU, then blas_variants.py, which
adds the Haswell kernels' values as "data_haswell" to the steps where they differ.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chapter4  # noqa: E402  (chapter 4's lessons: the book's classes)

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


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        self.last_attn_weights = self.dropout(attn_weights)
        return self.last_attn_weights @ values


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, steps):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        steps["queries"], steps["keys"], steps["values"] = queries, keys, values
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        steps["queries_view"], steps["keys_view"], steps["values_view"] = queries, keys, values
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        steps["queries_heads"], steps["keys_heads"], steps["values_heads"] = queries, keys, values
        attn_scores = queries @ keys.transpose(2, 3)
        steps["attn_scores"] = attn_scores.clone()
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        steps["masked"] = attn_scores
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        steps["attn_weights"] = attn_weights
        attn_weights = self.dropout(attn_weights)
        steps["attn_weights_dropout"] = attn_weights
        context_vec = (attn_weights @ values).transpose(1, 2)
        steps["context_vec_heads"] = context_vec
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        steps["context_vec"] = context_vec
        context_vec = self.out_proj(context_vec)
        steps["context_vecs"] = context_vec
        return context_vec


class GroupedQueryAttention(nn.Module):
    """ch04/04_gqa's GroupedQueryAttention without the KV cache."""
    def __init__(self, d_in, d_out, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0 and num_heads % num_kv_groups == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, steps):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        steps["queries"], steps["keys"], steps["values"] = queries, keys, values
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)
        steps["keys_repeated"], steps["values_repeated"] = keys, values
        steps["kv_group_of_head"] = torch.arange(self.num_heads, dtype=torch.float32).div(
            self.group_size, rounding_mode="floor")
        attn_scores = queries @ keys.transpose(2, 3)
        steps["attn_scores"] = attn_scores
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        steps["masked"] = attn_scores
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        steps["attn_weights"] = attn_weights
        attn_weights = self.dropout(attn_weights)
        steps["attn_weights_dropout"] = attn_weights
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        steps["context_vec"] = context_vec
        context_vec = self.out_proj(context_vec)
        steps["context_vecs"] = context_vec
        return context_vec


# ---------------------------------------------------------------------------------------------
# Dropout as PyTorch's MKL builds draw it (this PyTorch has no MKL): one 32-bit draw seeds an MCG31m1
# stream. The draw is read from an MT19937 with the same seed (numpy's legacy RandomState), skipping
# the draws made since torch.manual_seed; torch's own stream is then advanced by that one draw.

class MklDropout:
    def __init__(self, seed, draws_before):
        self.seed, self.draws = seed, draws_before

    def __call__(self, x, p):
        if p == 0:
            return x
        import numpy as np
        rs = np.random.RandomState(self.seed % 2**32)
        raw = rs.randint(0, 2**32, size=self.draws + 1, dtype=np.uint64)[-1]
        self.draws += 1
        torch.rand(1)  # keep torch's generator where PyTorch's would be
        if p == 1:
            return x * 0
        m, a = 2**31 - 1, 1132489760
        state = int(raw) % m or 1
        keep = []
        for _ in range(x.numel()):
            keep.append(state / m < 1 - p)
            state = (a * state) % m
        noise = torch.tensor(keep, dtype=torch.float32).reshape(x.shape)
        return x * noise.div_(1 - p)


# --model: the real layer (set per configuration by model_configurations). Each module is built, and draws,
# as without it; then its projections are replaced, so dropout draws afterwards as the book's code would.
REAL = None


def head_rows(head):
    hd = REAL["att"].head_dim
    return slice(head * hd, (head + 1) * hd)


def real_head(module, head=None):
    """A single-head module's W_query, W_key and W_value become head `head`'s rows of the real layer."""
    if not REAL:
        return
    rows = head_rows(REAL["head"] if head is None else head)
    att = REAL["att"]
    with torch.no_grad():
        for mine, real in ((module.W_query, att.W_query), (module.W_key, att.W_key), (module.W_value, att.W_value)):
            mine.weight.copy_(real.weight[rows])
            mine.bias.copy_(real.bias[rows])


def real_layer(module):
    """A MultiHeadAttention becomes the real layer: all heads, and out_proj."""
    if not REAL:
        return
    att = REAL["att"]
    with torch.no_grad():
        for mine, real in ((module.W_query, att.W_query), (module.W_key, att.W_key), (module.W_value, att.W_value),
                           (module.out_proj, att.out_proj)):
            mine.weight.copy_(real.weight)
            mine.bias.copy_(real.bias)


def numel(module):
    return sum(p.numel() for p in module.parameters())


def use_dropout(module, rng, seed, draws_before):
    """In mkl mode, replaces the module's nn.Dropout layers by the MKL emulation, sharing one stream."""
    if rng != "mkl":
        return
    class Layer(nn.Module):
        def __init__(self, stream, p):
            super().__init__()
            self.stream, self.p = stream, p

        def forward(self, x):
            return self.stream(x, self.p)

    mkl = MklDropout(seed, draws_before)
    for m in list(module.modules()):
        for name, child in list(m.named_children()):
            if isinstance(child, nn.Dropout):
                setattr(m, name, Layer(mkl, child.p))


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
    res = 0.
    for idx, element in enumerate(inputs[0]):
        res += inputs[0][idx] * query_vec[idx]
    steps["res"] = res
    steps["res_torch_dot"] = torch.dot(inputs[0], query_vec)
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
    # The book's checks, in its order: the printed row 2 summed as Python floats, every row's sum, then
    # after all_context_vecs 3.3.1's context_vec_2.
    q = default_query(inputs, None)
    steps["row_2_sum"] = sum([float(f"{v:.4f}") for v in attn_weights[q].tolist()])
    steps["all_row_sums"] = attn_weights.sum(dim=-1)
    steps["all_context_vecs"] = attn_weights @ inputs
    steps["context_vec_2"] = lesson_simple(inputs)["context_vec_2"]
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
    b_query = b_key = b_value = 0
    if REAL:  # --model: the head's columns of c_attn, (d_in, d_out) as these parameters are, and its bias
        rows = head_rows(REAL["head"])
        att = REAL["att"]
        W_query, W_key, W_value = (att.W_query.weight[rows].T, att.W_key.weight[rows].T, att.W_value.weight[rows].T)
        b_query, b_key, b_value = att.W_query.bias[rows], att.W_key.bias[rows], att.W_value.bias[rows]
    steps["W_query"], steps["W_key"], steps["W_value"] = W_query, W_key, W_value
    if REAL:
        steps["b_query"], steps["b_key"], steps["b_value"] = b_query, b_key, b_value
    steps["query_2"] = x_2 @ W_query + b_query
    steps["key_2"] = x_2 @ W_key + b_key
    steps["value_2"] = x_2 @ W_value + b_value
    query_2 = steps["query_2"]
    keys = inputs @ W_key + b_key
    values = inputs @ W_value + b_value
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
    if REAL:  # the same real weights; SelfAttention_v1 has no bias
        sa_v1.W_query, sa_v1.W_key, sa_v1.W_value = (nn.Parameter(W_query), nn.Parameter(W_key), nn.Parameter(W_value))
    steps["sa_v1_output"] = sa_v1(inputs)
    torch.manual_seed(seed_v2)
    sa_v2 = SelfAttention_v2(d_in, d_out, qkv_bias=qkv_bias)
    real_head(sa_v2)
    steps["sa_v2_output"] = sa_v2(inputs)
    # Exercise 3.1 (exercise-solutions.ipynb): sa_v1 takes sa_v2's weights; nn.Linear stores them transposed.
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
    steps["sa_v1_W_query"], steps["sa_v1_W_key"], steps["sa_v1_W_value"] = sa_v1.W_query, sa_v1.W_key, sa_v1.W_value
    steps["sa_v1_output_v2_weights"] = sa_v1(inputs)
    steps["v1_v2_max_diff"] = (sa_v1(inputs) - sa_v2(inputs)).abs().max()
    return steps


def causal_weights(inputs, d_out, seed_v2, qkv_bias, steps):
    """3.5.1: the causal attention weights of the SelfAttention_v2 built after manual_seed(seed_v2)."""
    d_in = inputs.shape[1]
    torch.manual_seed(seed_v2)
    sa_v2 = SelfAttention_v2(d_in, d_out, qkv_bias=qkv_bias)
    real_head(sa_v2)
    queries = sa_v2.W_query(inputs)
    keys = sa_v2.W_key(inputs)
    attn_scores = queries @ keys.T
    attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    steps.update(queries=queries, keys=keys, attn_scores=attn_scores, attn_weights=attn_weights)
    context_length = attn_scores.shape[0]
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    masked_simple = attn_weights * mask_simple
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    masked_simple_norm = masked_simple / row_sums
    steps.update(mask_simple=mask_simple, masked_simple=masked_simple, row_sums=row_sums,
                 masked_simple_norm=masked_simple_norm)
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    steps.update(mask=mask, masked=masked)
    return torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)


def make_batch(inputs, batch):
    return torch.stack([inputs] * batch, dim=0)


def lesson_causal(inputs, d_out=2, seed=None, qkv_bias=False, dropout=0.0, batch=2, rng="default"):
    seed_v2, seed_ca = (789, 123) if seed is None else (seed, seed)
    steps = {}
    steps["causal_attn_weights"] = causal_weights(inputs, d_out, seed_v2, qkv_bias, steps)
    x = make_batch(inputs, batch)
    steps["batch"] = x
    torch.manual_seed(seed_ca)
    ca = CausalAttention(inputs.shape[1], d_out, x.shape[1], dropout, qkv_bias)
    real_head(ca)
    use_dropout(ca, rng, seed_ca, numel(ca))
    params = parameters("ca", ca)
    steps.update(params)
    steps["context_vecs"] = ca(x)
    steps["ca_attn_weights"] = ca.last_attn_weights
    return reorder(steps, ["queries", "keys", "attn_scores", "attn_weights", "mask_simple", "masked_simple",
                           "row_sums", "masked_simple_norm", "mask", "masked", "causal_attn_weights", "batch",
                           *params, "ca_attn_weights", "context_vecs"])


def lesson_dropout(inputs, dropout=0.5, seed=None, d_out=2, qkv_bias=False, rng="default"):
    seed_v2, seed_a, seed_b = (789, 123, 123) if seed is None else (seed, seed, seed)
    steps = {}
    weights = causal_weights(inputs, d_out, seed_v2, qkv_bias, {})
    steps["causal_attn_weights"] = weights
    n = inputs.shape[0]
    drop = nn.Dropout(dropout)
    torch.manual_seed(seed_a)
    fn = (lambda x: MklDropout(seed_a, 0)(x, dropout)) if rng == "mkl" else drop
    steps["dropout_ones"] = fn(torch.ones(n, n))
    torch.manual_seed(seed_b)
    fn = (lambda x: MklDropout(seed_b, 0)(x, dropout)) if rng == "mkl" else drop
    steps["dropout_attn_weights"] = fn(weights)
    return steps


def lesson_mha_wrapper(inputs, d_out=2, heads=2, seed=None, qkv_bias=False, dropout=0.0, batch=2, rng="default"):
    seed_mha = 123 if seed is None else seed
    x = make_batch(inputs, batch)
    steps = {"batch": x}
    torch.manual_seed(seed_mha)
    mha = MultiHeadAttentionWrapper(inputs.shape[1], d_out, x.shape[1], dropout, heads, qkv_bias)
    for h, head in enumerate(mha.heads):
        real_head(head, h)
    use_dropout(mha, rng, seed_mha, numel(mha))
    steps.update(parameters("mha", mha))
    outs = []
    for h, head in enumerate(mha.heads):
        outs.append(head(x))
        steps[f"head_{h}_attn_weights"] = head.last_attn_weights
        steps[f"head_{h}_context_vec"] = outs[-1]
    steps["context_vecs"] = torch.cat(outs, dim=-1)
    return steps


def lesson_mha(inputs, d_out=2, heads=2, seed=None, qkv_bias=False, dropout=0.0, batch=2, rng="default"):
    seed_mha = 123 if seed is None else seed
    x = make_batch(inputs, batch)
    steps = {"batch": x}
    torch.manual_seed(seed_mha)
    mha = MultiHeadAttention(inputs.shape[1], d_out, x.shape[1], dropout, heads, qkv_bias)
    real_layer(mha)
    use_dropout(mha, rng, seed_mha, numel(mha))
    steps.update(parameters("mha", mha))
    steps["W_query_heads"] = mha.W_query.weight.view(heads, d_out // heads, inputs.shape[1])  # figure 3.26
    mha(x, steps)
    # 3.6.2's batched product on the chapter's example tensor, where the lesson explains attn_scores.
    a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                        [0.8993, 0.0390, 0.9268, 0.7388],
                        [0.7179, 0.7058, 0.9156, 0.4340]],
                       [[0.0772, 0.3565, 0.1479, 0.5331],
                        [0.4066, 0.2318, 0.4545, 0.9737],
                        [0.4606, 0.5159, 0.4220, 0.5786]]]])
    first_head = a[0, 0, :, :]
    second_head = a[0, 1, :, :]
    demo = {"a": a, "a_matmul": a @ a.transpose(2, 3), "first_res": first_head @ first_head.T,
            "second_res": second_head @ second_head.T}
    # labml.ai's formulation of the scores: sequence first, one einsum, then the chapter's layout.
    query = steps["queries_view"].permute(1, 0, 2, 3)
    key = steps["keys_view"].permute(1, 0, 2, 3)
    scores = torch.einsum('ibhd,jbhd->ijbh', query, key)
    labml = {"einsum_query": query, "einsum_key": key, "einsum_scores": scores,
             "einsum_scores_permuted": scores.permute(2, 3, 0, 1),
             "einsum_max_diff": (scores.permute(2, 3, 0, 1) - steps["attn_scores"]).abs().max()}
    out = {}
    for k, v in steps.items():
        if k == "attn_scores":
            out.update(demo)
        out[k] = v
        if k == "attn_scores":
            out.update(labml)
    if REAL:  # GPT-2's own next-token ranking after the text
        out["top5_token_ids"], out["top5_probas"] = REAL["top5"].indices, REAL["top5"].values
    return out


def lesson_gqa(inputs, d_out=4, heads=4, kv_groups=2, seed=None, qkv_bias=False, dropout=0.0, batch=2,
               rng="default"):
    seed_gqa = 123 if seed is None else seed
    x = make_batch(inputs, batch)
    steps = {"batch": x}
    torch.manual_seed(seed_gqa)
    gqa = GroupedQueryAttention(inputs.shape[1], d_out, dropout, heads, kv_groups, qkv_bias)
    use_dropout(gqa, rng, seed_gqa, numel(gqa))
    steps.update(parameters("gqa", gqa))
    gqa(x, steps)
    return steps


# ch04/03_kv-cache: the cached forward in our own words, over MultiHeadAttention's layers (or, with
# --kv-groups, GroupedQueryAttention's). Each call projects only its new tokens, appends their keys and
# values to cache_k/cache_v (b, tokens so far, kv_heads, head_dim) with torch.cat(dim=1), and takes the
# causal mask's rows from ptr_current_pos, the number of tokens cached before the call.

class KVCache:
    def __init__(self, module, context_length):
        self.m = module
        self.kv_heads = getattr(module, "num_kv_groups", module.num_heads)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.cache_k = self.cache_v = None
        self.ptr_current_pos = 0
        self.macs = 0  # multiply-adds of one sequence, counted from the operands' shapes

    def count_linear(self, x, layer):
        self.macs += x.shape[1] * layer.in_features * layer.out_features

    def count_matmul(self, a, b):  # (b, h, m, k) @ (b, h, k, n), one sequence's h products
        self.macs += a.shape[1] * a.shape[2] * a.shape[3] * b.shape[3]

    def __call__(self, x, steps=None, p=0, mask_rows=None):
        m, b, num_tokens = self.m, x.shape[0], x.shape[1]
        keys_new = m.W_key(x)
        values_new = m.W_value(x)
        queries = m.W_query(x)
        for layer in (m.W_key, m.W_value, m.W_query):
            self.count_linear(x, layer)
        keys_new = keys_new.view(b, num_tokens, self.kv_heads, m.head_dim)
        values_new = values_new.view(b, num_tokens, self.kv_heads, m.head_dim)
        queries = queries.view(b, num_tokens, m.num_heads, m.head_dim)
        if self.cache_k is None:
            self.cache_k, self.cache_v = keys_new, values_new
        else:
            self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
            self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
        keys, values = self.cache_k, self.cache_v
        if steps is not None:
            steps[f"queries_{p}"], steps[f"keys_new_{p}"], steps[f"values_new_{p}"] = queries, keys_new, values_new
            steps[f"cache_k_{p}"], steps[f"cache_v_{p}"] = keys, values
        keys, queries, values = keys.transpose(1, 2), queries.transpose(1, 2), values.transpose(1, 2)
        if self.kv_heads != m.num_heads or hasattr(m, "num_kv_groups"):
            keys = keys.repeat_interleave(m.num_heads // self.kv_heads, dim=1)
            values = values.repeat_interleave(m.num_heads // self.kv_heads, dim=1)
        attn_scores = queries @ keys.transpose(2, 3)
        self.count_matmul(queries, keys.transpose(2, 3))
        num_tokens_Q, num_tokens_K = queries.shape[-2], keys.shape[-2]
        if mask_rows is None:  # the fix: the rows of the positions being computed
            mask = self.mask[self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]
        else:
            mask = mask_rows
        self.ptr_current_pos += num_tokens_Q
        if steps is not None:
            steps[f"attn_scores_{p}"] = attn_scores.clone()
            if num_tokens_Q > 1:
                steps[f"mask_{p}"] = mask
        attn_scores.masked_fill_(mask.bool(), -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2)
        self.count_matmul(attn_weights, values)
        context_vec = context_vec.contiguous().view(b, num_tokens, m.d_out)
        context_vec = m.out_proj(context_vec)
        self.count_linear(context_vec, m.out_proj)
        if steps is not None:
            steps[f"attn_weights_{p}"] = attn_weights
            steps[f"context_vec_{p}"] = context_vec
        return context_vec, attn_weights


def lesson_kv_cache(inputs, d_out=2, heads=2, kv_groups=None, seed=None, qkv_bias=False, batch=2, prompt=1):
    seed_used = 123 if seed is None else seed
    num_tokens, d_in = inputs.shape
    x = make_batch(inputs, batch)
    steps = {"batch": x}
    torch.manual_seed(seed_used)
    if kv_groups is None:
        name, module = "mha", MultiHeadAttention(d_in, d_out, num_tokens, 0.0, heads, qkv_bias)
        real_layer(module)
    else:
        name, module = "gqa", GroupedQueryAttention(d_in, d_out, 0.0, heads, kv_groups, qkv_bias)
    module.eval()
    steps.update(parameters(name, module))
    kv_heads = heads if kv_groups is None else kv_groups
    head_dim = d_out // heads
    # Decoding: the prompt in one call, then one token per call.
    cache = KVCache(module, num_tokens)
    calls = [(0, prompt)] + [(p, 1) for p in range(prompt, num_tokens)]
    outs, macs = [], []
    for p, q in calls:
        before = cache.macs
        out, _ = cache(x[:, p:p + q], steps, p)
        outs.append(out)
        # Without a cache, the call recomputes the whole prefix: the uncached forward over p + q tokens.
        full = KVCache(module, num_tokens)
        full(x[:, :p + q])
        macs.append([p + q, full.macs, cache.macs - before])
    cache_k = cache.cache_k
    # The pitfall: the tokens after the prompt in one call, the mask's first rows instead of ptr_current_pos's.
    chunk = num_tokens - prompt
    wrong = KVCache(module, num_tokens)
    wrong(x[:, :prompt])
    steps["mask_unshifted"] = wrong.mask[:chunk, :num_tokens]
    _, steps["attn_weights_unshifted"] = wrong(x[:, prompt:], mask_rows=wrong.mask[:chunk, :num_tokens])
    steps["mask_ptr"] = cache.mask[prompt:prompt + chunk, :num_tokens]
    # Equivalence with the full causal forward.
    steps["context_vecs_cached"] = torch.cat(outs, dim=1)
    steps["context_vecs"] = module(x, {})
    steps["max_abs_diff"] = (steps["context_vecs_cached"] - steps["context_vecs"]).abs().max()
    # Cost and memory.
    steps["macs"] = torch.tensor(macs, dtype=torch.float)
    steps["macs_total"] = torch.tensor([sum(r[1] for r in macs), sum(r[2] for r in macs)], dtype=torch.float)
    steps["cache_bytes"] = (cache_k.numel() + cache.cache_v.numel()) * cache_k.element_size()
    steps["cache_bytes_by_kv_heads"] = torch.tensor(
        [[g, 2 * batch * num_tokens * g * head_dim * 4] for g in range(heads, 0, -1) if heads % g == 0],
        dtype=torch.float)
    return steps


def lesson_heads(inputs, d_out=2, heads=2, seed=None, qkv_bias=False):
    """attn heads without --model: attn mha's module, one layer, its attn_weights for a batch of one."""
    torch.manual_seed(123 if seed is None else seed)
    mha = MultiHeadAttention(inputs.shape[1], d_out, inputs.shape[0], 0.0, heads, qkv_bias)
    steps = {}
    mha(inputs.unsqueeze(0), steps)
    return {"attn_weights_layer_0": steps["attn_weights"][0]}


def heads_model_layers(model, x, layer):
    """attn heads --model: from block `layer` on, each block's causal attention weights (heads, n, n), as Hugging
    Face's output_attentions=True gives them, computed from the block's norm1 output as its attention does."""
    steps = {}
    for l in range(layer, len(model.trf_blocks)):
        blk = model.trf_blocks[l]
        att = blk.att
        h = blk.norm1(x).unsqueeze(0)
        n = h.shape[1]
        queries = att.W_query(h).view(1, n, att.num_heads, att.head_dim).transpose(1, 2)
        keys = att.W_key(h).view(1, n, att.num_heads, att.head_dim).transpose(1, 2)
        attn_scores = (queries @ keys.transpose(2, 3)).masked_fill(att.mask.bool()[:n, :n], -torch.inf)
        steps[f"attn_weights_layer_{l}"] = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)[0]
        x = blk(x.unsqueeze(0))[0]
    return steps


# attn heads: (tiny model or None, text or None for the book's sentence, --layer, options). Without a model it
# runs on the book's six tokens.
HEADS_RUNS = [
    (None, None, 0, []),
    (None, None, 0, ["--heads", "3", "--d-out", "6", "--seed", "5", "--qkv-bias"]),
    ("tiny-f32", "The cat sat on the mat.", 0, []),
    ("tiny-f16", "The quick brown fox jumps over the lazy dog, again and again.", 0, []),
    ("tiny-bf16", None, 1, []),
]


def heads_configurations(models):
    """attn heads' configurations, after every other (generate.py --heads-only rewrites only these)."""
    import gpt2_models
    out = []
    for name, text, layer, options in HEADS_RUNS:
        with torch.no_grad():
            if name is None:
                steps = lesson_heads(torch.tensor(BOOK_INPUTS), **lesson_kwargs(options))
                args = options
            else:
                _, steps, _ = gpt2_models.model_inputs(models[name], text or "Your journey starts with one step",
                                                       layer)
                steps.update(heads_model_layers(models[name], steps[f"x_block_{layer}"], layer))
                args = ["--model", "models/" + name] + (["--text", text] if text else []) + ["--layer", str(layer)]
        out.append({"lesson": "heads", "args": args, "steps": [dict(id=k, **encode(v)) for k, v in steps.items()]})
    return out


def parameters(name, module):
    """A module's parameters as steps, named as named_parameters() names them: "mha.W_query.weight"."""
    steps = {f"{name}.{path}": p for path, p in module.named_parameters()}
    steps["num_params"] = sum(p.numel() for p in module.parameters())  # exercise 3.3's count, a Python int
    return steps


def reorder(steps, order):
    assert set(order) == set(steps), (set(order) ^ set(steps))
    return {k: steps[k] for k in order}


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
    c += module_configurations()
    c += extreme_configurations()
    return c


def module_configurations():
    """The causal, dropout and multi-head lessons: seeds, sizes, batches, dropout with both RNGs."""
    runs = [
        ("causal", "", None), ("causal", "--dropout 0.1", None), ("causal", "--dropout 0.5 --dropout-rng mkl", None),
        ("causal", "--seed 7 --d-out 3", None), ("causal", "--batch 1", None),
        ("causal", "--batch 4 --dropout 0.3 --seed 11", None), ("causal", "--qkv-bias --dropout 0.9", None),
        ("causal", "--d-out 4 --batch 3", "seven_d8.json"), ("causal", "", "one_token.json"),
        ("causal", "--dropout 0.2 --dropout-rng mkl", "twelve_d16.json"),
        ("dropout", "", None), ("dropout", "--dropout-rng mkl", None), ("dropout", "--dropout 0.1", None),
        ("dropout", "--dropout 0.9 --seed 5", None), ("dropout", "--dropout 0.3 --dropout-rng mkl --seed 99", None),
        ("dropout", "--dropout 0.7", "four_d5.json"), ("dropout", "--dropout 0", None), ("dropout", "--dropout 1", None),
        ("mha-wrapper", "", None), ("mha-wrapper", "--d-out 1", None), ("mha-wrapper", "--heads 3 --dropout 0.2", None),
        ("mha-wrapper", "--heads 4 --d-out 3 --seed 1 --batch 1", None),
        ("mha-wrapper", "--dropout 0.5 --dropout-rng mkl", None), ("mha-wrapper", "--batch 3", "eight_d2.csv"),
        ("mha-wrapper", "--qkv-bias --heads 1", None),
        ("mha", "", None), ("mha", "--d-out 4 --heads 2", None), ("mha", "--d-out 6 --heads 3 --dropout 0.1", None),
        ("mha", "--d-out 8 --heads 4 --batch 4 --seed 42", None),
        ("mha", "--dropout 0.5 --dropout-rng mkl --d-out 4 --heads 4", None),
        ("mha", "--qkv-bias --d-out 6 --heads 2", None), ("mha", "--d-out 12 --heads 3", "ten_d12.json"),
        ("mha", "--d-out 2 --heads 1", "one_token.json"),
        ("mha", "--d-out 16 --heads 4 --dropout 0.3", "twelve_d16.json"),
        ("mha", "--random 9x5 --d-out 4 --heads 2", None),
        ("gqa", "", None), ("gqa", "--kv-groups 4", None), ("gqa", "--kv-groups 1", None),
        ("gqa", "--d-out 8 --heads 8 --kv-groups 2 --seed 3", None), ("gqa", "--dropout 0.4 --dropout-rng mkl", None),
        ("gqa", "--dropout 0.2 --batch 3", None), ("gqa", "--qkv-bias --d-out 6 --heads 6 --kv-groups 3", None),
        ("gqa", "--d-out 8 --heads 4 --kv-groups 2", "seven_d8.json"),
        ("gqa", "--d-out 16 --heads 8 --kv-groups 2 --batch 1", "twelve_d16.json"),
        ("gqa", "--random 7x4 --kv-groups 1", None),
        ("kv-cache", "", None), ("kv-cache", "--prompt 3", None), ("kv-cache", "--prompt 5", None),
        ("kv-cache", "--kv-groups 1", None), ("kv-cache", "--kv-groups 2", None),
        ("kv-cache", "--d-out 8 --heads 4 --kv-groups 2 --prompt 2 --batch 3 --qkv-bias", None),
        ("kv-cache", "--seed 7 --d-out 6 --heads 3", None), ("kv-cache", "--d-out 4 --heads 1 --batch 1", None),
        ("kv-cache", "--qkv-bias --seed 0", None), ("kv-cache", "--d-out 8 --heads 4 --prompt 4", "seven_d8.json"),
        ("kv-cache", "--d-out 16 --heads 8 --kv-groups 2 --batch 1", "twelve_d16.json"),
        ("kv-cache", "--d-out 12 --heads 3 --prompt 9", "ten_d12.json"), ("kv-cache", "", "two_tokens_d1.json"),
        ("kv-cache", "--random 20x16 --d-out 16 --heads 4 --prompt 5", None),
    ]
    return [(lesson, args.split(), file, lesson_kwargs(args.split())) for lesson, args, file in runs]


# --text: the student's sentence, tokenized by the reference BPE of gpt2_tokens.py and embedded as chapter 2
# does. The lesson then runs on those embeddings, after the four steps that made them.
TEXT_RUNS = [
    ("simple", "Your journey starts with one step", []), ("simple", "Akwirw ier", ["--d-in", "2", "--embedding-seed", "4294967301"]),
    ("all-tokens", "Hello, do you like tea?", ["--d-in", "4"]), ("trainable", "The cat sat.", ["--embedding-seed", "7", "--d-in", "5"]),
    ("causal", "a b", []), ("dropout", "x", ["--d-in", "2"]), ("mha-wrapper", "<|endoftext|>Hello", ["--d-in", "2"]),
    ("mha", "The quick brown fox jumps over the lazy dog.", ["--d-in", "8", "--d-out", "4", "--heads", "2"]),
    ("gqa", "I \u2764\ufe0f NY", ["--d-in", "4", "--embedding-seed", "0"]),
    ("kv-cache", "Your journey starts with one step", []), ("kv-cache", "don't stop", ["--d-in", "4", "--kv-groups", "1"]),
]


def text_inputs(text, d_in=3, seed=123):
    import gpt2_tokens
    ids = gpt2_tokens.Reference().encode(text)
    torch.manual_seed(seed)
    tok = nn.Embedding(50257, d_in)
    pos = nn.Embedding(len(ids), d_in)
    token_ids = torch.tensor(ids)
    token_embeddings = tok(token_ids)
    pos_embeddings = pos(torch.arange(len(ids)))
    inputs = (token_embeddings + pos_embeddings).detach()
    steps = {"token_ids": token_ids, "token_embeddings": token_embeddings, "pos_embeddings": pos_embeddings,
             "input_embeddings": inputs}
    return inputs, steps


def text_configurations():
    out = []
    for lesson, text, options in TEXT_RUNS:
        lesson_opts, text_opts = [], {}
        i = 0
        while i < len(options):
            if options[i] == "--d-in":
                text_opts["d_in"] = int(options[i + 1])
            elif options[i] == "--embedding-seed":
                text_opts["seed"] = int(options[i + 1])
            else:
                lesson_opts += options[i:i + 2]
            i += 2
        out.append((lesson, ["--text", text] + options, text, text_opts, lesson_kwargs(lesson_opts)))
    return out


# --model: the tiny GPT-2s of gpt2_models.py. (lesson, model, text or None for the book's sentence, layer,
# lesson options). Each runs on the real layer's weights, as attn does with the same arguments.
MODEL_RUNS = [
    ("simple", "tiny-f32", "Your journey starts with one step", 0, []),
    ("all-tokens", "tiny-f16", "Hello, world", 1, []),
    ("trainable", "tiny-f32", "The cat sat on the mat.", 2, ["--head", "1"]),
    ("trainable", "tiny-bf16", None, 1, ["--head", "3", "--query", "4"]),
    ("causal", "tiny-f16", "I like tea", 1, ["--head", "2"]),
    ("causal", "tiny-f32", "Hi", 0, []),
    ("dropout", "tiny-f32", "a b c d", 1, ["--head", "1"]),
    ("mha-wrapper", "tiny-bf16", "Akwirw ier", 0, []),
    ("mha", "tiny-f32", None, 0, []),
    ("mha", "tiny-f16", "The quick brown fox jumps over the lazy dog, again and again.", 1, ["--dropout", "0.1"]),
    ("mha", "tiny-bf16", "one", 1, ["--batch", "1"]),
    ("kv-cache", "tiny-f32", "Every step counts", 2, ["--prompt", "2"]),
]
# What the real layer fixes (attn's model_config): d_out, heads, qkv_bias.
MODEL_SHAPES = {"trainable": "one", "causal": "one", "dropout": "one", "mha-wrapper": "every", "mha": "layer",
                "kv-cache": "layer"}


def model_configurations(models):
    global REAL
    import gpt2_models
    out = []
    for lesson, name, text, layer, options in MODEL_RUNS:
        model = models[name]
        emb, heads = gpt2_models.TINY_MODELS[name][0], gpt2_models.TINY_MODELS[name][1]
        kwargs = lesson_kwargs(options)
        head = kwargs.pop("head", 0)
        inputs, steps, real = gpt2_models.model_inputs(model, text or "Your journey starts with one step", layer)
        REAL = dict(real, head=head)
        use = MODEL_SHAPES.get(lesson)
        if use:
            kwargs.update(qkv_bias=True, d_out=emb if use == "layer" else emb // heads)
            if use != "one":
                kwargs["heads"] = heads
        with torch.no_grad():
            steps.update(LESSONS[lesson](inputs, **kwargs))
        REAL = None
        args = ["--model", "models/" + name] + (["--text", text] if text else []) + ["--layer", str(layer)] + options
        out.append({"lesson": lesson, "args": args, "steps": [dict(id=k, **encode(v)) for k, v in steps.items()]})
    return out


def lesson_kwargs(argv):
    """attn's options -> the Python lesson's keyword arguments."""
    kwargs = {}
    i = 0
    while i < len(argv):
        key = argv[i][2:].replace("-", "_")
        if key == "qkv_bias":
            kwargs["qkv_bias"] = True
            i += 1
            continue
        value = argv[i + 1]
        if key == "dropout_rng":
            kwargs["rng"] = value
        elif key == "random":
            kwargs["random"] = tuple(int(v) for v in value.split("x"))
        elif key == "dropout":
            kwargs["dropout"] = float(value)
        else:
            kwargs[key] = int(value)
        i += 2
    return kwargs


# Numeric extremes: inputs are finite float32, but their products need not be. Dot products of values
# around 1e20 overflow to inf, inf - inf and 0 * inf are NaN, and PyTorch carries that on: softmax of a row
# holding inf or NaN (or only -inf) is all NaN, dropout keeps NaN (NaN * 0 is NaN), and a future key's
# zero weight times an infinite value poisons the context of every earlier query. Some files overflow
# everywhere, some in a few rows only; the largest float32, denormals and -0.0 have files of their own.
FLT_MAX = 3.4028234663852886e38
EXTREME_INPUTS = {
    # every dot product overflows: NaN from the scores on (the example of docs/errors.md)
    "ext_overflow.json": ([[1e20, 0.0], [0.0, 1e20]], None),
    # one token of five is huge: its rows overflow, the tokens before it stay finite in causal lessons
    "ext_some_rows.json": ([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [1e20, -3e19, 5e19], [0.22, 0.58, 0.33],
                            [0.77, 0.25, 0.1]], ["Your", "journey", "HUGE", "with", "one"]),
    # the largest float32 and its negative: projections overflow to +-inf, values too
    "ext_max.csv": ([[FLT_MAX, 0.5], [-FLT_MAX, 0.25], [0.1, 0.9], [FLT_MAX, -FLT_MAX]], None),
    # scores around a million: exp overflows in the naive softmax, torch.softmax stays finite
    "ext_large.json": ([[430.0, 150.0, 890.0], [550.0, 870.0, 660.0], [570.0, 850.0, 640.0]], None),
    # denormals (1e-45 is the smallest float32), a tiny normal, zeros of both signs
    "ext_denormal.json": ([[1e-45, 1e-40, -0.0], [0.5, -1e-40, 0.25], [-0.0, 0.0, 1e-38], [0.3, 0.2, 0.1]],
                          ["d0", "d1", "d2", "d3"]),
    # -0.0 everywhere it can be, and a token that is all -0.0
    "ext_negzero.json": ([[-0.0, -0.0], [-0.0, 0.5], [0.25, -0.0]], None),
    # nine tokens (PyTorch's vectorised reductions), two of them overflowing
    "ext_nine.json": ([[0.1 * (i + 1), 0.05 * (9 - i), 0.3] if i not in (3, 7) else [1e20, 1e20, -1e20]
                       for i in range(9)], None),
}


def write_extreme_inputs():
    files = {}
    for name, (rows, tokens) in EXTREME_INPUTS.items():
        path = os.path.join(INPUT_DIR, name)
        with open(path, "w") as f:
            if name.endswith(".json"):
                doc = {"tokens": tokens, "embeddings": rows} if tokens else {"embeddings": rows}
                f.write(json.dumps(doc) + "\n")
            else:
                for i, row in enumerate(rows):
                    f.write(",".join(([tokens[i]] if tokens else []) + [repr(float(v)) for v in row]) + "\n")
        files[name] = (torch.tensor(rows), tokens)
    return files


def extreme_configurations():
    runs = [
        ("simple", "", "ext_overflow.json"), ("simple", "--query 2", "ext_some_rows.json"),
        ("simple", "--query 0", "ext_some_rows.json"), ("simple", "--query 0", "ext_max.csv"),
        ("simple", "--query 3", "ext_max.csv"), ("simple", "", "ext_large.json"),
        ("simple", "--query 0", "ext_denormal.json"), ("simple", "--query 2", "ext_denormal.json"),
        ("simple", "--query 0", "ext_negzero.json"), ("simple", "--query 3", "ext_nine.json"),
        ("all-tokens", "", "ext_overflow.json"), ("all-tokens", "", "ext_some_rows.json"),
        ("all-tokens", "", "ext_max.csv"), ("all-tokens", "", "ext_large.json"),
        ("all-tokens", "", "ext_denormal.json"), ("all-tokens", "", "ext_negzero.json"),
        ("all-tokens", "", "ext_nine.json"),
        ("trainable", "--d-out 2", "ext_overflow.json"), ("trainable", "--query 2", "ext_some_rows.json"),
        ("trainable", "", "ext_some_rows.json"), ("trainable", "--qkv-bias", "ext_max.csv"),
        ("trainable", "", "ext_large.json"), ("trainable", "--query 0 --d-out 3", "ext_denormal.json"),
        ("trainable", "--qkv-bias --query 0", "ext_negzero.json"), ("trainable", "--d-out 4", "ext_nine.json"),
        ("causal", "", "ext_overflow.json"), ("causal", "--dropout 0.5", "ext_some_rows.json"),
        ("causal", "--dropout 0.5 --dropout-rng mkl --batch 1", "ext_max.csv"), ("causal", "", "ext_large.json"),
        ("causal", "--d-out 3", "ext_denormal.json"), ("causal", "--qkv-bias", "ext_negzero.json"),
        ("causal", "--d-out 3 --batch 1", "ext_nine.json"),
        ("dropout", "", "ext_overflow.json"), ("dropout", "--dropout 0.3", "ext_some_rows.json"),
        ("dropout", "--dropout 1", "ext_max.csv"), ("dropout", "--dropout 0", "ext_max.csv"),
        ("dropout", "--dropout-rng mkl", "ext_denormal.json"), ("dropout", "", "ext_negzero.json"),
        ("mha-wrapper", "", "ext_overflow.json"), ("mha-wrapper", "--heads 3", "ext_some_rows.json"),
        ("mha-wrapper", "--dropout 0.5", "ext_max.csv"), ("mha-wrapper", "--d-out 1", "ext_denormal.json"),
        ("mha-wrapper", "--qkv-bias", "ext_negzero.json"),
        ("mha", "", "ext_overflow.json"), ("mha", "--d-out 4 --heads 2", "ext_some_rows.json"),
        ("mha", "--dropout 0.3", "ext_max.csv"), ("mha", "--d-out 4 --heads 4", "ext_denormal.json"),
        ("mha", "--qkv-bias", "ext_negzero.json"), ("mha", "--d-out 4 --batch 1", "ext_nine.json"),
        ("mha", "--d-out 6 --heads 3", "ext_large.json"),
        ("gqa", "", "ext_overflow.json"), ("gqa", "--kv-groups 1", "ext_some_rows.json"),
        ("gqa", "--d-out 8 --heads 4 --dropout 0.4 --dropout-rng mkl", "ext_max.csv"),
        ("gqa", "", "ext_denormal.json"), ("gqa", "--qkv-bias", "ext_negzero.json"),
        ("gqa", "--batch 1", "ext_nine.json"),
        ("kv-cache", "", "ext_some_rows.json"), ("kv-cache", "", "ext_overflow.json"),
        ("kv-cache", "--kv-groups 1", "ext_nine.json"), ("kv-cache", "--prompt 2", "ext_denormal.json"),
        ("kv-cache", "--qkv-bias", "ext_negzero.json"), ("kv-cache", "--prompt 2 --batch 1", "ext_max.csv"),
    ]
    return [(lesson, args.split(), file, lesson_kwargs(args.split())) for lesson, args, file in runs]


LESSONS = {"simple": lesson_simple, "all-tokens": lesson_all_tokens, "trainable": lesson_trainable,
           "causal": lesson_causal, "dropout": lesson_dropout, "mha-wrapper": lesson_mha_wrapper,
           "mha": lesson_mha, "gqa": lesson_gqa, "kv-cache": lesson_kv_cache}
LESSONS.update(chapter4.LESSONS)


def encode(t):
    if isinstance(t, (float, int)):  # a Python number the book prints (row_2_sum, num_params)
        if isinstance(t, float) and not math.isfinite(t):  # strict JSON: as attn writes them
            return {"shape": [], "data": "nan" if math.isnan(t) else ("inf" if t > 0 else "-inf")}
        return {"shape": [], "data": t}
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


def normal_cases():
    """tensor.normal_() bit for bit: both of PyTorch's paths (under 16 elements, and 16 or more with a tail
    of any length), the cached second value across calls, and nn.Embedding(50257, 3) as chapter 2 makes it."""
    cases = []
    for seed in [0, 123, 789, 2**32 + 5]:
        for sizes in [[1], [2], [3, 3], [5], [15], [16], [17], [18], [31], [32], [47], [100], [1000], [15, 20], [1, 16, 1]]:
            torch.manual_seed(seed)
            draws = [bits(torch.empty(n).normal_()) for n in sizes]
            after = bits(torch.rand(2))  # where the stream is left
            cases.append({"seed": str(seed), "sizes": sizes, "bits": draws, "rand_after_bits": after})
    torch.manual_seed(123)
    emb = nn.Embedding(50257, 3).weight.detach().reshape(-1)
    b = bits(emb)
    big = {"seed": "123", "rows": 50257, "cols": 3, "first_bits": b[:48], "last_bits": b[-48:],
           "bits_sum_mod_2_64": str(sum(b) % 2**64)}
    return cases, big


def blas_cases():
    """Every configuration that does not load a model, computed here: the cases whose last bits can depend on
    which OpenBLAS kernels run (blas_variants.py recomputes them under another core)."""
    os.makedirs(INPUT_DIR, exist_ok=True)
    files = write_inputs()
    files.update(write_extreme_inputs())
    cases = []
    for lesson, args, file, kwargs in configurations():
        if "random" in kwargs:  # --random NxD: torch.rand(N, D) after torch.manual_seed(0)
            torch.manual_seed(0)
            inputs = torch.rand(*kwargs.pop("random"))
        elif file is None:
            inputs = torch.tensor(BOOK_INPUTS)
        else:
            inputs = files[file][0]
        steps = LESSONS[lesson](inputs, **kwargs)
        cases.append({
            "lesson": lesson,
            "args": args + (["--input", "inputs/" + file] if file else []),
            "steps": [dict(id=k, **encode(v)) for k, v in steps.items()],
        })
    for lesson, args, kwargs in chapter4.CONFIGURATIONS:  # the book's own example tensors: no input
        cases.append({"lesson": lesson, "args": args,
                      "steps": [dict(id=k, **encode(v)) for k, v in LESSONS[lesson](**kwargs).items()]})
    for lesson, args, text, text_opts, kwargs in text_configurations():
        inputs, steps = text_inputs(text, **text_opts)
        steps.update(LESSONS[lesson](inputs, **kwargs))
        cases.append({"lesson": lesson, "args": args, "steps": [dict(id=k, **encode(v)) for k, v in steps.items()]})
    return cases


def openblas_core():
    """The core OpenBLAS chose in this process (torch links it as libblas.so.3), or None."""
    import ctypes
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None


# The kernels the "data" of tests/golden/lessons/ come from: OpenBLAS's SkylakeX family (AVX-512). Other cores
# round some products differently; their values go in "data_haswell" (blas_variants.py).
SKYLAKEX_FAMILY = ("SkylakeX", "Cooperlake", "SapphireRapids")


def main():
    if torch.backends.mkl.is_available():
        sys.exit("generate.py wants a PyTorch build without MKL (Debian's python3-torch): dropout masks differ")
    core = openblas_core()
    if core not in SKYLAKEX_FAMILY:
        print(f"warning: OpenBLAS runs its {core} kernels here, not SkylakeX's: some last bits will differ from "
              "the committed data (run on an AVX-512 CPU, with OPENBLAS_CORETYPE=SkylakeX if need be)",
              file=sys.stderr)
    import gpt2_models
    import golden_store
    if sys.argv[1:] == ["--chapter4-only"]:
        # chapter 4's configurations alone, in place of those the store holds, every other file unchanged.
        version, kept = golden_store.read()
        cases = [c for c in kept if c["lesson"] not in chapter4.LESSONS]
        for lesson, args, kwargs in chapter4.CONFIGURATIONS:
            cases.append({"lesson": lesson, "args": args,
                          "steps": [dict(id=k, **encode(v)) for k, v in LESSONS[lesson](**kwargs).items()]})
        golden_store.write(cases, version)
        print(f"{len(cases)} configurations in tests/golden/lessons/, chapter 4's rewritten")
        return
    if sys.argv[1:] == ["--heads-only"]:
        # attn heads' configurations alone, in place of those the store holds, every other file unchanged.
        models = {name: gpt2_models.build(name) for name in gpt2_models.TINY_MODELS}
        version, kept = golden_store.read()
        cases = [c for c in kept if c["lesson"] != "heads"] + heads_configurations(models)
        golden_store.write(cases, version)
        print(f"{len(cases)} configurations in tests/golden/lessons/, attn heads' rewritten")
        return
    cases = blas_cases()
    models = gpt2_models.write_models()
    cases += model_configurations(models)
    cases += heads_configurations(models)
    golden_store.write(cases, torch.__version__)
    print(f"{len(cases)} configurations written to tests/golden/lessons/")
    with open(os.path.join(HERE, "rng.json"), "w") as f:
        normal, embedding = normal_cases()
        json.dump({"generator": "tests/golden/generate.py", "torch": torch.__version__, "cases": rng_cases(),
                   "normal": normal, "embedding": embedding}, f)
        f.write("\n")
    print("torch.rand and nn.Linear bits written to tests/golden/rng.json")


if __name__ == "__main__":
    main()
