"""Chapter 4's lessons in Python, for generate.py: the book's cells in order, each printed (or printable)
tensor recorded as a step under the id attn gives it. The classes are the book's (gpt2_models.py,
gpt_modules.py)."""
import torch
import torch.nn as nn

from gpt2_models import LayerNorm  # noqa: F401  (the book's classes)


def lesson_layer_norm(inputs=None, seed=None):
    seed = 123 if seed is None else seed
    steps = {}
    torch.manual_seed(seed)
    batch_example = torch.randn(2, 5)
    steps["batch_example"] = batch_example
    layer = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
    out = layer(batch_example)
    steps["out"] = out
    mean = out.mean(dim=-1, keepdim=True)
    var = out.var(dim=-1, keepdim=True)
    steps["mean"], steps["var"] = mean, var
    out_norm = (out - mean) / torch.sqrt(var)
    steps["out_norm"] = out_norm
    steps["out_norm_mean"] = out_norm.mean(dim=-1, keepdim=True)
    steps["out_norm_var"] = out_norm.var(dim=-1, keepdim=True)
    ln = LayerNorm(emb_dim=5)
    out_ln = ln(batch_example)
    steps["out_ln"] = out_ln
    steps["out_ln_mean"] = out_ln.mean(dim=-1, keepdim=True)
    steps["out_ln_var"] = out_ln.var(dim=-1, unbiased=False, keepdim=True)
    return steps


LESSONS = {"layer-norm": lesson_layer_norm}

# (lesson, attn's arguments, the Python lesson's keyword arguments)
CONFIGURATIONS = [
    ("layer-norm", [], {}),
    ("layer-norm", ["--seed", "0"], {"seed": 0}),
    ("layer-norm", ["--seed", "7"], {"seed": 7}),
    ("layer-norm", ["--seed", "2024"], {"seed": 2024}),
]
