#!/usr/bin/python3
"""Tiny GPT-2s for `attn --model`, built and run by PyTorch (imported by generate.py).

Each is chapter 4's GPTModel with random weights, a few layers and heads, a small n_embd and GPT-2's real
vocabulary of 50,257 tokens. It is written as Hugging Face writes GPT-2: config.json, model.safetensors with
Conv1D's (in, out) weights and GPT-2's tensor names (written here byte by byte, as the format's README
describes it: no safetensors package is needed), and the tokenizer as vocab.json and merges.txt (symbolic
links to attn's own data/gpt2 files, which are the same files under OpenAI's names).
"""
import json
import os
import struct

import torch
import torch.nn as nn

import gpt2_tokens

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.join(HERE, "models")

# name: (n_embd, n_head, n_layer, n_positions, dtype, tensor name prefix, seed)
TINY_MODELS = {
    "tiny-f32": (8, 2, 3, 16, "F32", "", 1),
    "tiny-f16": (12, 3, 2, 24, "F16", "transformer.", 2),
    "tiny-bf16": (8, 4, 2, 16, "BF16", "", 3),
}


# ---------------------------------------------------------------------------------------------
# Chapter 4's GPTModel (ch04.ipynb), with its MultiHeadAttention, unchanged but for comments.

class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class LayerNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]), GELU(),
                                    nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]))

    def forward(self, x):
        return self.layers(x)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        shortcut = x
        x = self.drop_shortcut(self.att(self.norm1(x)))
        x = x + shortcut
        shortcut = x
        x = self.drop_shortcut(self.ff(self.norm2(x)))
        return x + shortcut


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len)))
        x = self.final_norm(self.trf_blocks(x))
        return self.out_head(x)


# ---------------------------------------------------------------------------------------------

def build(name):
    """The model `name`, its weights rounded to its dtype (what attn reads back), in eval mode."""
    emb, heads, layers, ctx, dtype, _, seed = TINY_MODELS[name]
    torch.manual_seed(seed)
    cfg = {"vocab_size": 50257, "context_length": ctx, "emb_dim": emb, "n_heads": heads, "n_layers": layers,
           "drop_rate": 0.0, "qkv_bias": True}
    model = GPTModel(cfg)
    with torch.no_grad():
        for p in model.parameters():  # LayerNorm starts at ones and zeros: give it something to do
            p.add_(torch.randn_like(p) * 0.1)
        model.out_head.weight = model.tok_emb.weight  # tied, as load_weights_into_gpt does with wte
        for p in model.parameters():
            if dtype == "F16":
                p.copy_(p.half().float())
            elif dtype == "BF16":
                p.copy_(p.bfloat16().float())
    return model.eval()


def hf_tensors(model):
    """GPT-2's Hugging Face names and layouts: Conv1D weights are (in, out), the transpose of nn.Linear's."""
    t = {"wte.weight": model.tok_emb.weight, "wpe.weight": model.pos_emb.weight}
    for i, blk in enumerate(model.trf_blocks):
        h = f"h.{i}."
        att = blk.att
        t[h + "ln_1.weight"], t[h + "ln_1.bias"] = blk.norm1.scale, blk.norm1.shift
        t[h + "attn.bias"] = att.mask.view(1, 1, *att.mask.shape)  # a buffer, which attn must ignore
        t[h + "attn.c_attn.weight"] = torch.cat([att.W_query.weight.T, att.W_key.weight.T, att.W_value.weight.T], dim=1)
        t[h + "attn.c_attn.bias"] = torch.cat([att.W_query.bias, att.W_key.bias, att.W_value.bias])
        t[h + "attn.c_proj.weight"], t[h + "attn.c_proj.bias"] = att.out_proj.weight.T, att.out_proj.bias
        t[h + "ln_2.weight"], t[h + "ln_2.bias"] = blk.norm2.scale, blk.norm2.shift
        t[h + "mlp.c_fc.weight"], t[h + "mlp.c_fc.bias"] = blk.ff.layers[0].weight.T, blk.ff.layers[0].bias
        t[h + "mlp.c_proj.weight"], t[h + "mlp.c_proj.bias"] = blk.ff.layers[2].weight.T, blk.ff.layers[2].bias
    t["ln_f.weight"], t["ln_f.bias"] = model.final_norm.scale, model.final_norm.shift
    return t


def write_safetensors(path, tensors, dtype, prefix):
    torch_dtype = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[dtype]
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, tensor in tensors.items():
        tensor = tensor.detach().contiguous().to(torch_dtype)
        data = tensor.view(torch.int16 if tensor.element_size() == 2 else torch.int32).numpy().tobytes()
        header[prefix + name] = {"dtype": dtype, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the padding safetensors' own writer adds
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def write_models():
    models = {}
    for name, (emb, heads, layers, ctx, dtype, prefix, _) in TINY_MODELS.items():
        model = build(name)
        d = os.path.join(MODEL_DIR, name)
        os.makedirs(d, exist_ok=True)
        config = {"model_type": "gpt2", "vocab_size": 50257, "n_positions": ctx, "n_ctx": ctx, "n_embd": emb,
                  "n_layer": layers, "n_head": heads, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
                  "n_inner": None}
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(d, "model.safetensors"), hf_tensors(model), dtype, prefix)
        for link, target in (("vocab.json", "encoder.json"), ("merges.txt", "vocab.bpe")):
            path = os.path.join(d, link)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink(os.path.join("..", "..", "..", "..", "data", "gpt2", target), path)
        models[name] = model
    return models


def model_inputs(model, text, layer):
    """GPTModel.forward up to block `layer`'s norm1, as attn's input steps; and the layer itself."""
    ids = gpt2_tokens.Reference().encode(text)
    token_ids = torch.tensor(ids)
    with torch.no_grad():
        steps = {"token_ids": token_ids}
        steps["tok_embeds"] = model.tok_emb(token_ids)
        steps["pos_embeds"] = model.pos_emb(torch.arange(len(ids)))
        x = steps["tok_embeds"] + steps["pos_embeds"]
        steps["x_block_0"] = x
        for i in range(layer):
            x = model.trf_blocks[i](x.unsqueeze(0))[0]
            steps[f"x_block_{i + 1}"] = x
        inputs = model.trf_blocks[layer].norm1(x)
        steps["norm1_x"] = inputs
        logits = model(token_ids.unsqueeze(0))
        probas = torch.softmax(logits[0, -1], dim=-1)
        top6 = torch.topk(probas, 6)
        gaps = top6.values[:-1] - top6.values[1:]
        assert bool((gaps > 1e-6).all()), "the top-5 probabilities are too close to rank reliably"
        top5 = torch.topk(probas, 5)
    return inputs.detach(), steps, {"att": model.trf_blocks[layer].att, "top5": top5}
