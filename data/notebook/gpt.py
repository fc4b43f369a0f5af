class LayerNorm(nn.Module):
    # 4.2: each token's vector to mean 0 and variance 1, then a trained scale and shift
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


class GELU(nn.Module):
    # 4.3: GPT-2's tanh approximation of GELU
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)


class TransformerBlock(nn.Module):
    # 4.5: attention and feed-forward, each after a LayerNorm and with a shortcut around it
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
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
    # 4.6: embeddings, the blocks, a final LayerNorm and the output head
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


def read_safetensors(path):
    # Every tensor of a model.safetensors: with the safetensors package if it is installed; else read as the
    # format is written (a little-endian 8-byte header size, a JSON header of names, dtypes, shapes and
    # offsets, then the data).
    try:
        from safetensors.torch import load_file
        return load_file(path)
    except ImportError:
        import json, struct
        dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
        with open(path, "rb") as f:
            header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
            data = f.read()
        return {name: torch.frombuffer(bytearray(data[t["data_offsets"][0]:t["data_offsets"][1]]),
                                       dtype=dtypes[t["dtype"]]).reshape(t["shape"])
                for name, t in header.items() if name != "__metadata__" and t["dtype"] in dtypes}


def load_gpt2(model_dir):
    # A Hugging Face GPT-2 (config.json, model.safetensors) as the book's GPTModel, in float32, as
    # ch05/02_alternative_weight_loading loads it. Conv1D keeps its weights (in, out): nn.Linear's transpose.
    import json, os
    model_dir = os.fsdecode(model_dir)  # attn writes a directory whose name is not UTF-8 as bytes
    with open(model_dir + "/config.json") as f:
        hf = json.load(f)
    cfg = {"vocab_size": hf["vocab_size"], "context_length": hf["n_positions"], "emb_dim": hf["n_embd"],
           "n_heads": hf["n_head"], "n_layers": hf["n_layer"], "drop_rate": 0.0, "qkv_bias": True}
    params = {name.removeprefix("transformer."): t.float()
              for name, t in read_safetensors(model_dir + "/model.safetensors").items()}
    gpt = GPTModel(cfg)

    def assign(layer, name, tensor):
        assert getattr(layer, name).shape == tensor.shape, f"{name}: {tuple(tensor.shape)}"
        setattr(layer, name, nn.Parameter(tensor.clone()))

    assign(gpt.pos_emb, "weight", params["wpe.weight"])
    assign(gpt.tok_emb, "weight", params["wte.weight"])
    for b, block in enumerate(gpt.trf_blocks):
        p = f"h.{b}."
        q_w, k_w, v_w = torch.split(params[p + "attn.c_attn.weight"], cfg["emb_dim"], dim=-1)
        q_b, k_b, v_b = torch.split(params[p + "attn.c_attn.bias"], cfg["emb_dim"], dim=-1)
        for layer, w, bias in ((block.att.W_query, q_w, q_b), (block.att.W_key, k_w, k_b),
                               (block.att.W_value, v_w, v_b)):
            assign(layer, "weight", w.T)
            assign(layer, "bias", bias)
        assign(block.att.out_proj, "weight", params[p + "attn.c_proj.weight"].T)
        assign(block.att.out_proj, "bias", params[p + "attn.c_proj.bias"])
        assign(block.ff.layers[0], "weight", params[p + "mlp.c_fc.weight"].T)
        assign(block.ff.layers[0], "bias", params[p + "mlp.c_fc.bias"])
        assign(block.ff.layers[2], "weight", params[p + "mlp.c_proj.weight"].T)
        assign(block.ff.layers[2], "bias", params[p + "mlp.c_proj.bias"])
        assign(block.norm1, "scale", params[p + "ln_1.weight"])
        assign(block.norm1, "shift", params[p + "ln_1.bias"])
        assign(block.norm2, "scale", params[p + "ln_2.weight"])
        assign(block.norm2, "shift", params[p + "ln_2.bias"])
    assign(gpt.final_norm, "scale", params["ln_f.weight"])
    assign(gpt.final_norm, "shift", params["ln_f.bias"])
    assign(gpt.out_head, "weight", params["wte.weight"])  # GPT-2 ties the output head to wte
    gpt.requires_grad_(False)  # nothing is trained here: its slices print as plain tensors
    return gpt.eval()


def use_real_head(module, att, head):
    # --model: a single-head module (SelfAttention_v2, CausalAttention) takes head `head`'s rows of a real
    # layer's W_query, W_key and W_value, with their biases
    rows = slice(head * att.head_dim, (head + 1) * att.head_dim)
    for mine, real in ((module.W_query, att.W_query), (module.W_key, att.W_key), (module.W_value, att.W_value)):
        mine.weight.copy_(real.weight[rows])
        mine.bias.copy_(real.bias[rows])


def use_real_layer(module, att):
    # --model: a MultiHeadAttention takes a real layer's weights, all heads and out_proj
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        getattr(module, name).weight.copy_(getattr(att, name).weight)
        getattr(module, name).bias.copy_(getattr(att, name).bias)


class ExampleDeepNeuralNetwork(nn.Module):
    # 4.4: five Linear + GELU layers, each added to its input where the shapes agree and use_shortcut is set
    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        self.use_shortcut = use_shortcut
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Linear(layer_sizes[i], layer_sizes[i + 1]), GELU())
            for i in range(len(layer_sizes) - 1)
        ])

    def forward(self, x):
        for layer in self.layers:
            layer_output = layer(x)
            if self.use_shortcut and x.shape == layer_output.shape:
                x = x + layer_output
            else:
                x = layer_output
        return x


class DummyTransformerBlock(nn.Module):
    # 4.1: a placeholder, replaced by TransformerBlock in 4.5
    def __init__(self, cfg):
        super().__init__()

    def forward(self, x):
        return x


class DummyLayerNorm(nn.Module):
    # 4.1: a placeholder, replaced by LayerNorm in 4.2
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()

    def forward(self, x):
        return x


class DummyGPTModel(nn.Module):
    # 4.1: GPTModel's outline, its blocks and final norm placeholders that return their input
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[DummyTransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = DummyLayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len)))
        x = self.final_norm(self.trf_blocks(x))
        return self.out_head(x)
