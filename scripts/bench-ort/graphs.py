#!/usr/bin/python3
"""ONNX graphs, built by hand with onnx.helper, of the forward that `attn bench` times: causal multi-head
self-attention of x (B, T, C) with C = heads * head_dim, then the output projection, float32, no biases.
Part of scripts/bench-ort.sh (a developer tool, not part of the tests).

    graphs.py build --out DIR --dim C --heads H --kv-groups G [--weights DUMP_DIR | --seed S]
    graphs.py reference --out DIR --batch B --tokens T --dim C --heads H --kv-groups G [--seed S]
    graphs.py compare --data DIR      (checks this file's NumPy reference against the dumped outputs)

`build` writes one model per variant into DIR, each with the single input "x" (B, T, C; B and T left
symbolic, so one file serves every batch and length) and the single output "y" (B, T, C):
  ms_attention  com.microsoft Attention (fused (C, 3C) QKV weights, unidirectional=1), MatMul out_proj^T
  mha23         three MatMuls, ONNX opset-23 Attention (is_causal=1, 3-D inputs), MatMul out_proj^T
  gqa           three MatMuls (K, V to G*hd), com.microsoft GroupQueryAttention, MatMul out_proj^T
  gqa23         three MatMuls (K, V to G*hd), opset-23 Attention with kv_num_heads=G, MatMul out_proj^T
Weights come from `attn-bench --dump DIR` files (nn.Linear layout (out, in): y = x @ W.T) or are random.
`reference` writes the same files as `attn-bench --dump` from this file's NumPy reference.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# The opset-23 Attention op is newer than anything onnx 1.12 (Debian's python3-onnx) knows: its newest
# opset is 17 and its IR version 8. helper.make_node does not look ops up, so the node is an ordinary
# protobuf; only the checker would refuse it ("ir_version is higher than the checker's"), and it is not
# run: ORT checks the model when it loads it. The IR version is set by hand to 11, the one that goes with
# opset 23 (ONNX 1.18); ORT 1.30 happens to load the model with onnx 1.12's IR 8 as well.
ONNX_OPSET_WITH_ATTENTION = 23
IR_VERSION_FOR_OPSET_23 = 11
VARIANTS = ("ms_attention", "mha23", "gqa", "gqa23")
MHA_VARIANTS = ("ms_attention", "mha23")
GQA_VARIANTS = ("gqa", "gqa23")


def fail(msg):
    print(f"bench-ort: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- weights

def weight_names():
    return ["mha_w_query", "mha_w_key", "mha_w_value", "out_proj", "gqa_w_query", "gqa_w_key", "gqa_w_value"]


def random_weights(c, heads, groups, seed):
    hd = c // heads
    rng = np.random.default_rng(seed)
    # nn.Linear's default range, U(-1/sqrt(in), 1/sqrt(in)), keeps the activations of a plausible size.
    bound = 1.0 / np.sqrt(c)
    shapes = {"mha_w_query": (c, c), "mha_w_key": (c, c), "mha_w_value": (c, c), "out_proj": (c, c),
              "gqa_w_query": (c, c), "gqa_w_key": (groups * hd, c), "gqa_w_value": (groups * hd, c)}
    return {k: rng.uniform(-bound, bound, size=s).astype(np.float32) for k, s in shapes.items()}


def load_weights(d, c, heads, groups):
    hd = c // heads
    want = {"mha_w_query": (c, c), "mha_w_key": (c, c), "mha_w_value": (c, c), "out_proj": (c, c),
            "gqa_w_query": (c, c), "gqa_w_key": (groups * hd, c), "gqa_w_value": (groups * hd, c)}
    w = {}
    for name, shape in want.items():
        path = os.path.join(d, name + ".npy")
        if not os.path.exists(path):
            fail(f"the dump in {d} has no {name}.npy")
        a = np.load(path)
        if a.shape != shape or a.dtype != np.float32:
            fail(f"{path} is {a.dtype} {a.shape}, expected float32 {shape}")
        w[name] = a
    return w


# ---------------------------------------------------------------- NumPy reference

def attention_reference(x, wq, wk, wv, wo, heads, groups):
    """The definition attn-bench uses: per query head h (reading key/value head h // (H // G)), causal
    softmax(Q K^T / sqrt(hd)) V, the heads concatenated, then @ out_proj.T. Done in float64 so that the
    reference itself adds no float32 rounding to the differences printed."""
    x = x.astype(np.float64)
    b, t, c = x.shape
    hd = c // heads
    q = (x @ wq.T.astype(np.float64)).reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
    k = (x @ wk.T.astype(np.float64)).reshape(b, t, groups, hd).transpose(0, 2, 1, 3)
    v = (x @ wv.T.astype(np.float64)).reshape(b, t, groups, hd).transpose(0, 2, 1, 3)
    rep = heads // groups
    k = np.repeat(k, rep, axis=1)  # head h -> group h // rep, as the dump's note says
    v = np.repeat(v, rep, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    s = np.where(np.triu(np.ones((t, t), dtype=bool), 1), -np.inf, s)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    p = s / s.sum(axis=-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(b, t, c)
    return (ctx @ wo.T.astype(np.float64)).astype(np.float32)


def reference_outputs(x, w, heads, groups):
    c = x.shape[2]
    return {
        "mha_out": attention_reference(x, w["mha_w_query"], w["mha_w_key"], w["mha_w_value"], w["out_proj"], heads, heads),
        "gqa_out": attention_reference(x, w["gqa_w_query"], w["gqa_w_key"], w["gqa_w_value"], w["out_proj"], heads, groups),
    }


# ---------------------------------------------------------------- graphs

def init(name, a):
    return numpy_helper.from_array(np.ascontiguousarray(a, dtype=a.dtype), name)


def io(name, c):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["B", "T", c])


def model(name, nodes, inits, c, opsets, ir_version=None):
    graph = helper.make_graph(nodes, name, [io("x", c)], [io("y", c)], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="attn scripts/bench-ort")
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def projections(w, prefix):
    # nn.Linear stores W as (out, in) and computes x @ W.T; the initializer holds W.T so a plain MatMul does it.
    nodes, inits = [], []
    for part, out in (("query", "q"), ("key", "k"), ("value", "v")):
        inits.append(init(f"w_{out}_t", w[f"{prefix}_w_{part}"].T))
        nodes.append(helper.make_node("MatMul", ["x", f"w_{out}_t"], [out], name=f"proj_{out}"))
    return nodes, inits


def out_projection(w):
    return (helper.make_node("MatMul", ["ctx", "w_o_t"], ["y"], name="out_proj"),
            init("w_o_t", w["out_proj"].T))


def build_ms_attention(w, c, heads, groups):
    # com.microsoft Attention takes the packed (C, 3C) weight, Q | K | V column blocks, and computes
    # x @ W + bias itself. Its schema marks the bias optional, but ORT 1.30's CPU kernel crashes
    # (segmentation fault) on a model without it, so a zero bias goes in: one vector add per row.
    wqkv = np.concatenate([w["mha_w_query"].T, w["mha_w_key"].T, w["mha_w_value"].T], axis=1)
    inits = [init("w_qkv", wqkv), init("b_qkv", np.zeros(3 * c, np.float32))]
    att = helper.make_node("Attention", ["x", "w_qkv", "b_qkv"], ["ctx"], name="attention",
                           domain="com.microsoft", num_heads=heads, unidirectional=1)
    o, oi = out_projection(w)
    return model("ms_attention", [att, o], inits + [oi], c, [("", 17), ("com.microsoft", 1)])


def build_attention23(name, w, prefix, c, heads, kv_heads):
    nodes, inits = projections(w, prefix)
    # 3-D inputs (B, T, heads * hd): the op splits the heads itself, which it can do only when told
    # q_num_heads and kv_num_heads. No mask input: is_causal=1 masks the upper triangle, and the default
    # scale is 1/sqrt(hd).
    nodes.append(helper.make_node("Attention", ["q", "k", "v"], ["ctx"], name="attention",
                                  is_causal=1, q_num_heads=heads, kv_num_heads=kv_heads))
    o, oi = out_projection(w)
    return model(name, nodes + [o], inits + [oi], c, [("", ONNX_OPSET_WITH_ATTENTION)], IR_VERSION_FOR_OPSET_23)


def build_gqa(w, c, heads, groups):
    nodes, inits = projections(w, "gqa")
    # GroupQueryAttention is written for decoding with a KV cache: it wants, per batch row, seqlens_k =
    # (valid past + new tokens) - 1, and the scalar total_sequence_length. With no past, a prompt of T
    # tokens has seqlens_k = T - 1 in every row and total T. They are computed from x's shape inside the
    # graph so the model keeps one input and serves every B and T. The op is causal by itself (no
    # attribute for that); past_key and past_value are left out (empty names).
    inits += [init("i0", np.array([0], np.int64)), init("i1", np.array([1], np.int64)),
              init("i2", np.array([2], np.int64)), init("one32", np.array([1], np.int32))]
    nodes += [
        helper.make_node("Shape", ["x"], ["x_shape"]),
        helper.make_node("Slice", ["x_shape", "i0", "i1"], ["batch_1"]),           # [B]
        helper.make_node("Slice", ["x_shape", "i1", "i2"], ["tokens_1"]),          # [T]
        helper.make_node("Cast", ["tokens_1"], ["tokens_1_i32"], to=TensorProto.INT32),
        helper.make_node("Sub", ["tokens_1_i32", "one32"], ["last_1"]),            # [T - 1]
        helper.make_node("Expand", ["last_1", "batch_1"], ["seqlens_k"]),          # (B,) of T - 1
        helper.make_node("Squeeze", ["tokens_1_i32", "i0"], ["total_sequence_length"]),  # scalar T
        helper.make_node("GroupQueryAttention",
                         ["q", "k", "v", "", "", "seqlens_k", "total_sequence_length"],
                         ["ctx", "present_key", "present_value"], name="gqa", domain="com.microsoft",
                         num_heads=heads, kv_num_heads=groups),
    ]
    o, oi = out_projection(w)
    return model("gqa", nodes + [o], inits + [oi], c, [("", 17), ("com.microsoft", 1)])


def build_all(w, c, heads, groups):
    return {
        "ms_attention": build_ms_attention(w, c, heads, groups),
        "mha23": build_attention23("mha23", w, "mha", c, heads, heads),
        "gqa": build_gqa(w, c, heads, groups),
        "gqa23": build_attention23("gqa23", w, "gqa", c, heads, groups),
    }


# ---------------------------------------------------------------- commands

def check_dims(c, heads, groups):
    if c <= 0 or heads <= 0 or groups <= 0 or c % heads:
        fail(f"the dim {c} must be a multiple of the heads {heads}")
    if heads % groups:
        fail(f"the heads {heads} must be a multiple of the kv groups {groups}")


def cmd_build(a):
    check_dims(a.dim, a.heads, a.kv_groups)
    w = load_weights(a.weights, a.dim, a.heads, a.kv_groups) if a.weights else \
        random_weights(a.dim, a.heads, a.kv_groups, a.seed)
    os.makedirs(a.out, exist_ok=True)
    for name, m in build_all(w, a.dim, a.heads, a.kv_groups).items():
        onnx.save(m, os.path.join(a.out, name + ".onnx"))


def cmd_reference(a):
    check_dims(a.dim, a.heads, a.kv_groups)
    w = random_weights(a.dim, a.heads, a.kv_groups, a.seed)
    x = np.random.default_rng(a.seed + 1).uniform(0, 1, (a.batch, a.tokens, a.dim)).astype(np.float32)
    os.makedirs(a.out, exist_ok=True)
    for name, arr in {"x": x, **w, **reference_outputs(x, w, a.heads, a.kv_groups)}.items():
        np.save(os.path.join(a.out, name + ".npy"), arr)


def cmd_compare(a):
    # The dump does not say its heads and groups; they come from the command line like the dump's.
    x = np.load(os.path.join(a.data, "x.npy"))
    c = x.shape[2]
    w = load_weights(a.data, c, a.heads, a.kv_groups)
    ref = reference_outputs(x, w, a.heads, a.kv_groups)
    out = {k: float(np.max(np.abs(ref[k] - np.load(os.path.join(a.data, k + ".npy"))))) for k in ref}
    print(", ".join(f"{k} {v:.1e}" for k, v in out.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", required=True)
    b.add_argument("--weights", help="a directory written by attn-bench --dump")
    r = sub.add_parser("reference")
    r.add_argument("--out", required=True)
    r.add_argument("--batch", type=int, required=True)
    r.add_argument("--tokens", type=int, required=True)
    c = sub.add_parser("compare")
    c.add_argument("--data", required=True)
    for p in (b, r):
        p.add_argument("--dim", type=int, required=True)
        p.add_argument("--seed", type=int, default=123)
    for p in (b, r, c):
        p.add_argument("--heads", type=int, required=True)
        p.add_argument("--kv-groups", type=int, required=True)
    a = ap.parse_args()
    {"build": cmd_build, "reference": cmd_reference, "compare": cmd_compare}[a.cmd](a)


if __name__ == "__main__":
    main()
