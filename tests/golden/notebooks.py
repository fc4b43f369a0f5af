#!/usr/bin/python3
"""Runs attn's --format ipynb and --format py with PyTorch, and records that they print what attn printed.

    /usr/bin/python3 tests/golden/notebooks.py [ATTN]          # ATTN: build/attn by default
    /usr/bin/python3 tests/golden/notebooks.py --only causal    # the configurations whose arguments contain it
    /usr/bin/python3 tests/golden/notebooks.py --check [ATTN]   # the same runs, no record written (the torch tier)

For every configuration in CONFIGURATIONS it asks attn for the notebook and the script, then
  - runs the notebook's code cells in order in one namespace, each cell's printed text compared with the
    output attn stored in it;
  - runs the script with python3, its whole output compared with the stored outputs joined.
It writes tests/golden/notebooks/record.json: per configuration, its arguments ("args": "tiny-f32" and the
like stand for tests/golden/models/<name>), "code_hash", the FNV-1a 64 hash (src/text/content.hpp's
text_hash) of the notebook's code cells joined with "\n", the model directory as attn was given it written
MODEL there (the notebook names it, and the checkout may be anywhere), and "printed", what PyTorch printed.
tests/test_notebook.cpp checks attn against that record, so the suite needs no PyTorch; rerun this when a
lesson's notebook changes. With --only, the record keeps its other configurations and the ones run replace
theirs. --check runs every configuration (or those of --only) under the kernels this process's
environment gives, writes nothing, and exits 1 when any printed other than attn stored (the `torch` tier of
the suite, tests/test_notebook.cpp).

Printed numbers come out of OpenBLAS, whose kernels for AVX2 and AVX-512 CPUs may differ in a last bit: the
record keeps what PyTorch printed with OPENBLAS_CORETYPE=Haswell, and with SkylakeX under "skylakex"
({code_hash, printed}) where that differs.
"""
import contextlib
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
    ["dummy-gpt"], ["layer-norm"], ["gelu"], ["feed-forward"], ["shortcut"], ["block"], ["gpt"], ["generate"], ["gqa"], ["kv-cache"], ["tour"],
    ["layer-norm", "--seed", "7"], ["shortcut", "--seed", "42"], ["feed-forward", "--emb-dim", "8", "--seed", "3"],
    ["dummy-gpt", "--emb-dim", "6", "--context-length", "5", "--drop-rate", "0.3", "--seed", "4"],
    ["generate", "--emb-dim", "8", "--heads", "2", "--layers", "2", "--context-length", "5", "--seed", "3", "--max-new-tokens", "3"],
    ["gpt", "--emb-dim", "8", "--heads", "2", "--layers", "2", "--context-length", "6", "--drop-rate", "0.2", "--seed", "9"],
    ["block", "--emb-dim", "12", "--heads", "3", "--drop-rate", "0.5", "--qkv-bias", "--seed", "5"],
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


def text_hash(text):
    """FNV-1a, 64 bits, of the text's UTF-8 bytes as 16 lowercase hex digits: src/text/content.cpp's text_hash."""
    h = 14695981039346656037
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def code_hash(nb, config):
    """text_hash of the code cells joined with "\n", each model directory given to attn written MODEL."""
    code = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code")
    for given, arg in zip(attn_args(config), config):
        if arg != given:
            code = code.replace(given, "MODEL")
    return text_hash(code)


def run_notebook(nb):
    """Each code cell in order in one namespace; a list of (source, stored output, printed output) per code cell."""
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
    """Runs one configuration's notebook and script (under OPENBLAS_CORETYPE=coretype, unless None) and returns
    its record, {code_hash, printed}; SystemExit on any difference from what attn stored."""
    env = dict(os.environ)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    where = " ".join(config) + (f" ({coretype})" if coretype else "")
    args = [attn, *attn_args(config)]

    def attn_output(fmt):
        done = subprocess.run(args + ["--format", fmt], capture_output=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{where}: attn --format {fmt} exited {done.returncode}: {done.stderr.decode().strip()}")
        return done.stdout

    script = attn_output("py")
    notebook = attn_output("ipynb")
    nb = json.loads(notebook)
    # The cells run in a process of their own, with the same OPENBLAS_CORETYPE as attn: OpenBLAS reads it once,
    # when it loads.
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--run-cells"], input=notebook,
                          capture_output=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{where}: a cell failed:\n{done.stderr.decode()}")
    pairs = [tuple(p) for p in json.loads(done.stdout)]
    for source, stored, printed in pairs:
        if stored != printed:
            raise SystemExit(f"{where}: a cell printed other than attn stored\n--- cell\n"
                             f"{source}\n--- attn\n{stored}--- PyTorch\n{printed}")
    stored_all = "".join(s for _, s, _ in pairs)
    printed = subprocess.run([sys.executable, "-"], input=script, check=True, capture_output=True, env=env).stdout
    if printed.decode() != stored_all:
        raise SystemExit(f"{where}: the script printed other than the notebook")
    return {"code_hash": code_hash(nb, config), "printed": printed.decode()}


def main():
    argv = sys.argv[1:]
    if argv == ["--run-cells"]:  # check()'s child: the notebook on stdin, (source, stored, printed) per cell out
        json.dump(run_notebook(json.load(sys.stdin)), sys.stdout)
        return
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1]
        del argv[i:i + 2]
    checking = "--check" in argv
    if checking:
        argv.remove("--check")
    attn = argv[0] if argv else os.path.join(ROOT, "build", "attn")
    every = CONFIGURATIONS + MODEL_CONFIGURATIONS
    chosen = [c for c in every if not only or only in " ".join(c)]
    if checking:  # every configuration run, each failure said, nothing written
        failed = 0
        for config in chosen:
            try:
                check(attn, config, None)
                print("ok:", " ".join(config), file=sys.stderr)
            except SystemExit as e:  # says which configuration itself
                failed += 1
                print("FAILED:", e, file=sys.stderr)
            except Exception as e:  # a cell that raised, attn's output that is not JSON, ...
                failed += 1
                print("FAILED:", " ".join(config) + ":", type(e).__name__ + ":", e, file=sys.stderr)
        print(f"{len(chosen) - failed} of {len(chosen)} configurations printed what attn stored", file=sys.stderr)
        sys.exit(1 if failed or not chosen else 0)
    records = []
    for config in chosen:
        by_core = {core: check(attn, config, core) for core in ("Haswell", "SkylakeX")}
        record = {"args": config, **by_core["Haswell"]}
        if by_core["SkylakeX"] != by_core["Haswell"]:
            record["skylakex"] = by_core["SkylakeX"]
        records.append(record)
        print("ok:", " ".join(config), file=sys.stderr)
    path = os.path.join(HERE, "notebooks", "record.json")
    if only is not None and os.path.exists(path):  # the configurations not run keep their records
        with open(path) as f:
            kept = {json.dumps(r["args"]): r for r in json.load(f)["configurations"]}
        kept.update({json.dumps(r["args"]): r for r in records})
        records = [kept[key] for key in map(json.dumps, every) if key in kept]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/notebooks.py", "torch": __import__("torch").__version__,
                   "configurations": records}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
