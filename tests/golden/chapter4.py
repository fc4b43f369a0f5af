"""Chapter 4's lessons in Python, for generate.py: the book's cells in order, each printed (or printable)
tensor recorded as a step under the id attn gives it. The classes are the book's (gpt2_models.py,
gpt_modules.py)."""
import torch
import torch.nn as nn

from gpt2_models import GELU, LayerNorm  # the book's classes


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


def lesson_gelu(inputs=None):
    gelu, relu = GELU(), nn.ReLU()
    x = torch.linspace(-3, 3, 100)
    return {"x": x, "y_gelu": gelu(x), "y_relu": relu(x)}


def lesson_feed_forward(inputs=None, seed=None, emb_dim=768):
    from gpt2_models import FeedForward
    seed = 123 if seed is None else seed
    torch.manual_seed(seed)
    ffn = FeedForward({"emb_dim": emb_dim})
    x = torch.rand(2, 3, emb_dim)
    expanded = ffn.layers[0](x)
    activated = ffn.layers[1](expanded)
    out = ffn.layers[2](activated)
    return {"x": x, "expanded": expanded, "activated": activated, "out": out,
            "num_params": sum(p.numel() for p in ffn.parameters())}


def lesson_shortcut(inputs=None, seed=None):
    from gpt_modules import ExampleDeepNeuralNetwork
    seed = 123 if seed is None else seed
    layer_sizes = [3, 3, 3, 3, 3, 1]
    sample_input = torch.tensor([[1., 0., -1.]])
    steps = {"sample_input": sample_input}
    for which, use in (("without", False), ("with", True)):
        torch.manual_seed(seed)
        model = ExampleDeepNeuralNetwork(layer_sizes, use_shortcut=use)
        output = model(sample_input)
        loss = nn.MSELoss()(output, torch.tensor([[0.]]))
        loss.backward()
        steps[f"output_{which}_shortcut"] = output
        steps[f"loss_{which}_shortcut"] = loss
        for i, layer in enumerate(model.layers):
            steps[f"grad_mean_{which}_shortcut_{i}"] = layer[0].weight.grad.abs().mean().item()
    return steps


def lesson_block(inputs=None, seed=None, emb_dim=768, n_heads=12, drop_rate=0.1, qkv_bias=False):
    from gpt2_models import TransformerBlock
    seed = 123 if seed is None else seed
    torch.manual_seed(seed)
    x = torch.rand(2, 4, emb_dim)
    block = TransformerBlock({"emb_dim": emb_dim, "context_length": 1024, "n_heads": n_heads,
                              "drop_rate": drop_rate, "qkv_bias": qkv_bias})
    # block(x), one module at a time, in the book's (training) mode: the same dropout masks in the same order.
    norm1 = block.norm1(x)
    att = block.att(norm1)
    att_dropped = block.drop_shortcut(att)
    shortcut = att_dropped + x
    norm2 = block.norm2(shortcut)
    ff = block.ff(norm2)
    ff_dropped = block.drop_shortcut(ff)
    output = ff_dropped + shortcut
    return {"x": x, "norm1": norm1, "att": att, "att_dropped": att_dropped, "shortcut": shortcut,
            "norm2": norm2, "ff": ff, "ff_dropped": ff_dropped, "output": output,
            "ff_params": sum(p.numel() for p in block.ff.parameters()),
            "att_params": sum(p.numel() for p in block.att.parameters())}


BOOK_BATCH = [[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]]  # tiktoken's gpt2 ids of 4.1's two texts


def lesson_gpt(inputs=None, seed=None, emb_dim=768, n_heads=12, n_layers=12, context_length=1024, drop_rate=0.1,
               qkv_bias=False):
    from gpt2_models import GPTModel
    seed = 123 if seed is None else seed
    batch = torch.tensor(BOOK_BATCH)
    torch.manual_seed(seed)
    model = GPTModel({"vocab_size": 50257, "context_length": context_length, "emb_dim": emb_dim,
                      "n_heads": n_heads, "n_layers": n_layers, "drop_rate": drop_rate, "qkv_bias": qkv_bias})
    # model(batch), one module at a time, in the book's (training) mode.
    steps = {"batch": batch}
    steps["tok_embeds"] = tok_embeds = model.tok_emb(batch)
    steps["pos_embeds"] = pos_embeds = model.pos_emb(torch.arange(batch.shape[1]))
    steps["x"] = x = tok_embeds + pos_embeds
    steps["drop_emb"] = x = model.drop_emb(x)
    for i, block in enumerate(model.trf_blocks):
        steps[f"trf_blocks_{i}"] = x = block(x)
    steps["final_norm"] = x = model.final_norm(x)
    steps["out"] = model.out_head(x)
    total_params = sum(p.numel() for p in model.parameters())
    steps["total_params"] = total_params
    steps["total_params_gpt2"] = total_params - sum(p.numel() for p in model.out_head.parameters())
    steps["total_size_mb"] = total_params * 4 / (1024 * 1024)
    return steps


def lesson_dummy_gpt(inputs=None, seed=None, emb_dim=768, context_length=1024, drop_rate=0.1):
    from gpt_modules import DummyGPTModel
    seed = 123 if seed is None else seed
    batch = torch.tensor(BOOK_BATCH)
    torch.manual_seed(seed)
    model = DummyGPTModel({"vocab_size": 50257, "context_length": context_length, "emb_dim": emb_dim,
                           "n_heads": 12, "n_layers": 12, "drop_rate": drop_rate, "qkv_bias": False})
    steps = {"batch": batch}
    steps["tok_embeds"] = tok_embeds = model.tok_emb(batch)
    steps["pos_embeds"] = pos_embeds = model.pos_emb(torch.arange(batch.shape[1]))
    steps["x"] = x = tok_embeds + pos_embeds
    steps["drop_emb"] = x = model.drop_emb(x)
    steps["logits"] = model.out_head(x)  # the placeholder blocks and norm return their input
    return steps


def lesson_generate(inputs=None, seed=None, emb_dim=768, n_heads=12, n_layers=12, context_length=1024,
                    qkv_bias=False, max_new_tokens=6):
    from gpt2_models import GPTModel
    seed = 123 if seed is None else seed
    torch.manual_seed(seed)
    model = GPTModel({"vocab_size": 50257, "context_length": context_length, "emb_dim": emb_dim,
                      "n_heads": n_heads, "n_layers": n_layers, "drop_rate": 0.1, "qkv_bias": qkv_bias})
    model.eval()
    idx = torch.tensor([[15496, 11, 314, 716]])  # "Hello, I am", as tiktoken's gpt2 encodes it
    steps = {"encoded_tensor": idx}
    # generate_text_simple, each step kept
    for k in range(1, max_new_tokens + 1):
        with torch.no_grad():
            logits = model(idx[:, -context_length:])[:, -1, :]
        probas = torch.softmax(logits, dim=-1)
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
        steps[f"logits_{k}"], steps[f"probas_{k}"], steps[f"idx_next_{k}"] = logits, probas, idx_next
    steps["out"] = idx
    return steps


LESSONS = {"layer-norm": lesson_layer_norm, "gelu": lesson_gelu, "feed-forward": lesson_feed_forward,
           "shortcut": lesson_shortcut, "block": lesson_block,
           "gpt": lesson_gpt, "dummy-gpt": lesson_dummy_gpt,
           "generate": lesson_generate}

# (lesson, attn's arguments, the Python lesson's keyword arguments)
# The gpt and dummy-gpt ones are few and small: their logits are (2, 4, 50257) whatever the model's size, 8 MB
# of JSON each, twice where OpenBLAS's Haswell kernels give other last bits. The default runs are checked
# elsewhere: generate's ids against the book's (tests/test_gpt.cpp), and every default's printed values by
# the notebook record (tests/golden/notebooks/record.json).
CONFIGURATIONS = [
    ("dummy-gpt", ["--emb-dim", "5", "--context-length", "4", "--drop-rate", "0.5", "--seed", "7"],
     {"emb_dim": 5, "context_length": 4, "drop_rate": 0.5, "seed": 7}),
    ("dummy-gpt", ["--emb-dim", "16", "--drop-rate", "0"], {"emb_dim": 16, "drop_rate": 0.0}),
    ("generate", ["--emb-dim", "8", "--heads", "2", "--layers", "2", "--context-length", "6", "--seed", "7",
                  "--max-new-tokens", "4"],
     {"emb_dim": 8, "n_heads": 2, "n_layers": 2, "context_length": 6, "seed": 7, "max_new_tokens": 4}),
    ("layer-norm", [], {}),
    ("layer-norm", ["--seed", "0"], {"seed": 0}),
    ("layer-norm", ["--seed", "7"], {"seed": 7}),
    ("layer-norm", ["--seed", "2024"], {"seed": 2024}),
    ("gelu", [], {}),
    ("feed-forward", [], {}),
    ("feed-forward", ["--emb-dim", "4", "--seed", "7"], {"emb_dim": 4, "seed": 7}),
    ("feed-forward", ["--emb-dim", "1"], {"emb_dim": 1}),
    ("feed-forward", ["--emb-dim", "33", "--seed", "2024"], {"emb_dim": 33, "seed": 2024}),
    ("shortcut", [], {}),
    ("shortcut", ["--seed", "1"], {"seed": 1}),
    ("shortcut", ["--seed", "42"], {"seed": 42}),
    ("block", [], {}),
    ("block", ["--emb-dim", "8", "--heads", "2", "--seed", "7"], {"emb_dim": 8, "n_heads": 2, "seed": 7}),
    ("block", ["--emb-dim", "12", "--heads", "3", "--drop-rate", "0.5", "--qkv-bias"],
     {"emb_dim": 12, "n_heads": 3, "drop_rate": 0.5, "qkv_bias": True}),
    ("block", ["--emb-dim", "16", "--heads", "4", "--drop-rate", "0", "--seed", "2024"],
     {"emb_dim": 16, "n_heads": 4, "drop_rate": 0.0, "seed": 2024}),
    ("gpt", ["--emb-dim", "16", "--heads", "2", "--layers", "2", "--context-length", "32", "--seed", "7"],
     {"emb_dim": 16, "n_heads": 2, "n_layers": 2, "context_length": 32, "seed": 7}),
    ("gpt", ["--emb-dim", "8", "--heads", "4", "--layers", "3", "--context-length", "4", "--drop-rate", "0.5",
             "--qkv-bias"],
     {"emb_dim": 8, "n_heads": 4, "n_layers": 3, "context_length": 4, "drop_rate": 0.5, "qkv_bias": True}),
]
