#!/usr/bin/python3
"""Runs attn's --format ipynb and --format py with PyTorch, and records that they print what attn printed.

    /usr/bin/python3 tests/golden/notebooks.py [ATTN]        # ATTN: build/attn by default
    /usr/bin/python3 tests/golden/notebooks.py --only causal  # the configurations whose arguments contain it

For every configuration in CONFIGURATIONS it asks attn for the notebook and the script, then
  - runs the notebook's code cells in order in one namespace, each cell's printed text compared with the
    output attn stored in it;
  - runs the script with python3, its whole output compared with the stored outputs joined.
It writes tests/golden/notebooks/record.json: per configuration, the arguments, the SHA-256 of the script and
of the notebook attn wrote, and what PyTorch printed. tests/test_notebook.cpp checks attn against that record,
so the suite needs no PyTorch; rerun this when a lesson's notebook changes.

Printed numbers come out of OpenBLAS, whose kernels for AVX2 and AVX-512 CPUs may differ in a last bit: the
record keeps what PyTorch printed with OPENBLAS_CORETYPE=Haswell and with SkylakeX, where they differ.
"""
import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")

# (lesson, arguments): every lesson with its defaults, and a spread of options.
CONFIGURATIONS = [
    ["simple"], ["all-tokens"], ["trainable"], ["causal"], ["dropout"], ["mha-wrapper"], ["mha"], ["heads"],
    ["gqa"], ["kv-cache"], ["tour"],
    ["causal", "--seed", "5", "--dropout", "0.5"],
    ["simple", "--query", "3"],
    ["trainable", "--seed", "7", "--qkv-bias", "--d-out", "3", "--query", "0"],
    ["all-tokens", "--random", "5x4"],
    ["mha", "--random", "7x6", "--heads", "3", "--d-out", "6", "--dropout", "0.2", "--qkv-bias", "--batch", "3"],
    ["mha-wrapper", "--heads", "3", "--dropout", "0.5", "--seed", "11"],
    ["dropout", "--dropout", "0.25", "--seed", "3"],
    ["gqa", "--heads", "6", "--kv-groups", "3", "--d-out", "12", "--dropout", "0.1"],
    ["kv-cache", "--prompt", "3"],
    ["kv-cache", "--kv-groups", "1", "--heads", "4", "--d-out", "8", "--seed", "9"],
    ["causal", "--text", "Attention is all you need, they said."],
    ["mha", "--text", "The cat sat on the mat.", "--d-in", "4", "--heads", "2", "--d-out", "4"],
    ["heads", "--heads", "3", "--d-out", "6", "--seed", "5", "--qkv-bias"],
]
MODEL_CONFIGURATIONS = [
    ["simple", "--model", "tiny-f32"],
    ["trainable", "--model", "tiny-f32", "--head", "1"],
    ["causal", "--model", "tiny-f16", "--text", "The quick brown fox."],
    ["mha", "--model", "tiny-f32", "--layer", "1"],
    ["kv-cache", "--model", "tiny-bf16"],
    ["heads", "--model", "tiny-f32"],
]


def attn_args(config):
    out = []
    for a in config:
        out.append(os.path.join(MODELS, a) if a.startswith("tiny-") else a)
    return out


def run_notebook(nb):
    """Each code cell in order in one namespace; a list of (stored output, printed output) per code cell."""
    ns = {"__name__": "__main__"}
    pairs = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        stored = "".join("".join(o.get("text", [])) for o in cell["outputs"])
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile("".join(cell["source"]), cell["id"], "exec"), ns)
        pairs.append(("".join(cell["source"]), stored, buf.getvalue()))
    return pairs


def check(attn, config, coretype):
    env = dict(os.environ, OPENBLAS_CORETYPE=coretype)
    args = [attn, *attn_args(config)]
    script = subprocess.run(args + ["--format", "py"], check=True, capture_output=True, env=env).stdout
    notebook = subprocess.run(args + ["--format", "ipynb"], check=True, capture_output=True, env=env).stdout
    nb = json.loads(notebook)
    import torch
    torch.set_grad_enabled(True)
    pairs = run_notebook(nb)
    for source, stored, printed in pairs:
        if stored != printed:
            raise SystemExit(f"{' '.join(config)} ({coretype}): a cell printed other than attn stored\n--- cell\n"
                             f"{source}\n--- attn\n{stored}--- PyTorch\n{printed}")
    stored_all = "".join(s for _, s, _ in pairs)
    printed = subprocess.run([sys.executable, "-"], input=script, check=True, capture_output=True, env=env).stdout
    if printed.decode() != stored_all:
        raise SystemExit(f"{' '.join(config)} ({coretype}): the script printed other than the notebook")
    return {"script_sha256": hashlib.sha256(script).hexdigest(),
            "notebook_sha256": hashlib.sha256(notebook).hexdigest(), "printed": printed.decode()}


def main():
    argv = sys.argv[1:]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1]
        del argv[i:i + 2]
    attn = argv[0] if argv else os.path.join(ROOT, "build", "attn")
    records = []
    for config in CONFIGURATIONS + MODEL_CONFIGURATIONS:
        if only and only not in " ".join(config):
            continue
        by_core = {core: check(attn, config, core) for core in ("Haswell", "SkylakeX")}
        record = {"args": config, **by_core["Haswell"]}
        if by_core["SkylakeX"] != by_core["Haswell"]:
            record["skylakex"] = by_core["SkylakeX"]
        records.append(record)
        print("ok:", " ".join(config), file=sys.stderr)
    if only is None:
        with open(os.path.join(HERE, "notebooks", "record.json"), "w") as f:
            json.dump({"generator": "tests/golden/notebooks.py", "torch": __import__("torch").__version__,
                       "configurations": records}, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
