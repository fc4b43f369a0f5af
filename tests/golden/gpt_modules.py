#!/usr/bin/python3
"""Golden data for chapter 4's modules (src/modules/gpt.hpp), computed by PyTorch with the book's classes.

Run with Debian's python3-torch (PyTorch 1.13, CPU), on a CPU with AVX-512, with OpenBLAS's SkylakeX kernels
(the golden data's, as generate.py's):

    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 tests/golden/gpt_modules.py

It writes tests/golden/gpt/modules.json: for small configurations, seeds and dropout rates, the parameter
counts, the train-mode logits of GPTModel and DummyGPTModel (dropout drawn from the generator as the book's
model(batch) draws it, right after the model is built), every block's output, the eval-mode logits and
greedy generation (generate_text_simple), FeedForward and LayerNorm on the book's inputs, and 4.4's
gradients without and with shortcuts. tests/test_gpt.cpp builds the same modules from the same seeds and
compares. The test suite never needs PyTorch; rerun this only when the cases change.
"""
import json
import os

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gpt", "modules.json")


# Chapter 4's classes as the book writes them: gpt2_models.py's (the tiny --model GPT-2s are built from them
# too); the dummy model, generation and 4.4's network are here.
from gpt2_models import FeedForward, GELU, GPTModel, LayerNorm  # noqa: E402


class DummyGPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        _, seq_len = in_idx.shape
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len)))
        return self.out_head(x)


def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        idx_next = torch.argmax(torch.softmax(logits, dim=-1), dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class ExampleDeepNeuralNetwork(nn.Module):
    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        self.use_shortcut = use_shortcut
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(layer_sizes[i], layer_sizes[i + 1]), GELU())
                                     for i in range(len(layer_sizes) - 1)])

    def forward(self, x):
        for layer in self.layers:
            out = layer(x)
            x = x + out if self.use_shortcut and x.shape == out.shape else out
        return x


def values(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


CONFIGS = [
    # vocab, context, emb, heads, layers, drop, qkv_bias, seed, batch
    (50, 8, 8, 2, 2, 0.1, False, 123, [[1, 2, 3, 4], [5, 6, 7, 8]]),
    (64, 16, 16, 4, 3, 0.0, True, 7, [[10, 20, 30, 40, 50]]),
    (97, 12, 12, 3, 1, 0.5, False, 3, [[0, 96, 5], [7, 7, 7]]),
    (40, 6, 4, 1, 2, 0.2, True, 2024, [[39, 0, 1, 2, 3, 4]]),
]


def main():
    torch.set_num_threads(1)
    cases = []
    for vocab, ctx, emb, heads, layers, drop, qkv, seed, batch in CONFIGS:
        cfg = {"vocab_size": vocab, "context_length": ctx, "emb_dim": emb, "n_heads": heads, "n_layers": layers,
               "drop_rate": drop, "qkv_bias": qkv}
        idx = torch.tensor(batch)
        torch.manual_seed(seed)
        model = GPTModel(cfg)
        params = sum(p.numel() for p in model.parameters())
        block_outs = []
        hooks = [block.register_forward_hook(lambda module, args, out: block_outs.append(out.detach().clone()))
                 for block in model.trf_blocks]
        logits = model(idx)  # train mode, as the book calls it
        for hook in hooks:
            hook.remove()
        model.eval()
        with torch.no_grad():
            eval_logits = model(idx)
        generated = generate_text_simple(model, idx[:1], 4, ctx)
        torch.manual_seed(seed)
        dummy = DummyGPTModel(cfg)
        dummy_logits = dummy(idx)
        cases.append({"config": cfg, "seed": seed, "batch": batch, "parameters": params,
                      "logits": values(logits), "logits_shape": list(logits.shape),
                      "block_outs": [values(b) for b in block_outs], "eval_logits": values(eval_logits),
                      "generated": generated[0].tolist(), "dummy_logits": values(dummy_logits)})

    modules = []
    for emb, seed in [(8, 123), (24, 5)]:
        torch.manual_seed(seed)
        ff = FeedForward({"emb_dim": emb})
        x = torch.rand(2, 3, emb)
        modules.append({"emb_dim": emb, "seed": seed, "x": values(x), "ff": values(ff(x))})

    torch.manual_seed(123)
    batch_example = torch.randn(2, 5)
    layer = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
    out = layer(batch_example)
    ln = LayerNorm(6)
    norm = {"batch_example": values(batch_example), "out": values(out),
            "mean": values(out.mean(dim=-1, keepdim=True)), "var": values(out.var(dim=-1, keepdim=True)),
            "out_ln": values(ln(out))}

    shortcut = []
    sizes = [3, 3, 3, 3, 3, 1]
    x = torch.tensor([[1.0, 0.0, -1.0]])
    for use in (False, True):
        torch.manual_seed(123)
        net = ExampleDeepNeuralNetwork(sizes, use)
        output = net(x)
        loss = nn.MSELoss()(output, torch.tensor([[0.0]]))
        loss.backward()
        shortcut.append({"use_shortcut": use, "output": values(output), "loss": float(loss),
                         "weight_grads": [values(l[0].weight.grad) for l in net.layers],
                         "bias_grads": [values(l[0].bias.grad) for l in net.layers],
                         "grad_means": [float(l[0].weight.grad.abs().mean()) for l in net.layers]})

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
                   "models": cases, "feed_forward": modules, "layer_norm": norm,
                   "shortcut": shortcut}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
