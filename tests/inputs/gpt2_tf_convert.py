#!/usr/bin/python3
"""scripts/gpt2-tf-to-hf.py on a tiny GPT-2, without TensorFlow (Debian 12 packages none, and the tests
use Debian's python3). Run by tests/test_safetensors.cpp as `gpt2_tf_convert.py SCRIPT MODEL WORK`:

- MODEL (one of tests/golden/models, in Hugging Face's layout) is read with the small safetensors reader
  below and turned into what OpenAI's checkpoint holds: each tensor under its TensorFlow name and shape
  (model/h0/attn/c_attn/w as (1, in, out), model/ln_f/g, ...), written here from OpenAI's model.py, not
  taken from the script, plus hparams.json, encoder.json and vocab.bpe.
- WORK/plain/m: the script's writing half alone on those NumPy arrays, with its plain safetensors writer.
- WORK/main/m: the whole script, main(["WORK/ckpt", "WORK/main/m"]), with a stand-in for the three
  tf.train calls it makes (latest_checkpoint, list_variables, load_variable) that serves those arrays as
  TensorFlow would: this checks the reading half's calls and names, not TensorFlow itself. The checkpoint's
  own files are empty stand-ins: writing TensorFlow's tensor bundle without TensorFlow would be a reader and
  writer of our own that only agree with each other.
- Both outputs are read back and every tensor compared with MODEL's exactly, the tokenizer files byte for
  byte; then the refusals: each exits 1 with one line, and leaves nothing behind.

The C++ test then runs attn on MODEL and on both outputs and compares the JSON byte for byte. Exits
non-zero, saying why, at the first difference; prints "ok" at the end."""
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import types

import numpy as np

SCRIPT, MODEL, WORK = sys.argv[1], sys.argv[2], sys.argv[3]


def load_script():
    spec = importlib.util.spec_from_file_location("gpt2_tf_to_hf", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_safetensors(path):
    """{name: float32 array} of a safetensors file of F32, F16 or BF16 tensors."""
    data = open(path, "rb").read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        if t["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4")
        elif t["dtype"] == "F16":
            a = np.frombuffer(raw, "<f2").astype(np.float32)
        elif t["dtype"] == "BF16":
            a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: {name} is {t['dtype']}")
        out[name] = a.reshape(t["shape"])
    return out


def as_checkpoint(hf):
    """Hugging Face's tensors under the names and shapes of OpenAI's TensorFlow checkpoint (its model.py:
    a LayerNorm's g and b, a conv1d's w of (1, nx, nf) and b). The causal-mask buffers are left out."""
    out = {}
    for name, a in hf.items():
        name = name[len("transformer."):] if name.startswith("transformer.") else name
        if name in ("wte.weight", "wpe.weight"):
            out["model/" + name.split(".")[0]] = a
            continue
        parts = name.split(".")
        if parts[0] == "ln_f":
            out["model/ln_f/" + {"weight": "g", "bias": "b"}[parts[1]]] = a
            continue
        assert parts[0] == "h", name
        module, leaf = parts[2:-1], parts[-1]
        if module == ["attn"]:  # h.L.attn.bias: the causal mask, a buffer
            continue
        prefix = f"model/h{parts[1]}/" + "/".join(module)
        if module[0].startswith("ln_"):
            out[prefix + "/" + {"weight": "g", "bias": "b"}[leaf]] = a
        elif leaf == "weight":
            out[prefix + "/w"] = a.reshape((1,) + a.shape)
        else:
            out[prefix + "/b"] = a
    return out


def fake_tensorflow(prefix, variables):
    """The tf.train calls gpt_download.py makes, answered from `variables` as TensorFlow answers them."""
    def latest_checkpoint(directory):
        line = open(os.path.join(directory, "checkpoint")).readline()
        name = line.split('"')[1]  # model_checkpoint_path: "model.ckpt"
        return os.path.join(directory, name)

    def list_variables(path):
        assert path == prefix, (path, prefix)
        return [(name, list(variables[name].shape)) for name in sorted(variables)]

    def load_variable(path, name):
        assert path == prefix, (path, prefix)
        return variables[name].copy()

    tf = types.ModuleType("tensorflow")
    tf.train = types.SimpleNamespace(latest_checkpoint=latest_checkpoint, list_variables=list_variables,
                                     load_variable=load_variable)
    return tf


def run_main(converter, args):
    """main(args)'s exit status and what it wrote on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = converter.main(args)
    return status, err.getvalue()


def check(condition, why):
    if not condition:
        raise SystemExit(why)


def check_output(dest, originals, config, vocab, merges):
    got = read_safetensors(os.path.join(dest, "model.safetensors"))
    want = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in originals.items()}
    want = {k: v for k, v in want.items() if not k.endswith(".attn.bias")}
    check(sorted(got) == sorted(want), f"{dest}: tensors {sorted(set(got) ^ set(want))} differ")
    for name, a in want.items():
        check(got[name].dtype == np.float32 and got[name].shape == a.shape, f"{dest}: {name}'s shape")
        check(np.array_equal(got[name].view(np.uint32), a.view(np.uint32)), f"{dest}: {name}'s values")
    written = json.load(open(os.path.join(dest, "config.json")))
    for key in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"):
        check(written[key] == config[key], f"{dest}/config.json: {key} {written[key]} != {config[key]}")
    check(written["model_type"] == "gpt2" and written["activation_function"] == "gelu_new", f"{dest}/config.json")
    check(open(os.path.join(dest, "vocab.json"), "rb").read() == vocab, f"{dest}/vocab.json differs")
    check(open(os.path.join(dest, "merges.txt"), "rb").read() == merges, f"{dest}/merges.txt differs")
    check(sorted(os.listdir(dest)) == ["config.json", "merges.txt", "model.safetensors", "vocab.json"], dest)


def main():
    converter = load_script()
    check("tensorflow" not in sys.modules, "importing the script imported TensorFlow")
    check(importlib.util.find_spec("safetensors") is None,
          "the safetensors package is installed: this test is of the plain writer, without it")
    originals = read_safetensors(os.path.join(MODEL, "model.safetensors"))
    config = json.load(open(os.path.join(MODEL, "config.json")))
    vocab = open(os.path.join(MODEL, "vocab.json"), "rb").read()
    merges = open(os.path.join(MODEL, "merges.txt"), "rb").read()
    variables = as_checkpoint(originals)
    hparams = {"n_vocab": config["vocab_size"], "n_ctx": config["n_positions"], "n_embd": config["n_embd"],
               "n_head": config["n_head"], "n_layer": config["n_layer"]}
    check(len(variables) == 4 + 12 * config["n_layer"], f"{len(variables)} variables")

    # gpt_download.py's directory.
    ckpt = os.path.join(WORK, "ckpt")
    os.makedirs(ckpt)
    files = {"checkpoint": b'model_checkpoint_path: "model.ckpt"\nall_model_checkpoint_paths: "model.ckpt"\n',
             "hparams.json": json.dumps(hparams).encode(), "encoder.json": vocab, "vocab.bpe": merges,
             "model.ckpt.data-00000-of-00001": b"", "model.ckpt.index": b"", "model.ckpt.meta": b""}
    for name, data in files.items():
        open(os.path.join(ckpt, name), "wb").write(data)

    # 1. The writing half alone, with the plain safetensors writer.
    os.makedirs(os.path.join(WORK, "plain"))
    converter.write_hf(os.path.join(WORK, "plain", "m"), hparams, variables, vocab, merges, plain=True)
    check_output(os.path.join(WORK, "plain", "m"), originals, config, vocab, merges)

    # 2. The whole script, TensorFlow answered by the stand-in.
    os.makedirs(os.path.join(WORK, "main"))
    sys.modules["tensorflow"] = fake_tensorflow(os.path.join(ckpt, "model.ckpt"), variables)
    status, err = run_main(converter, [ckpt, os.path.join(WORK, "main", "m")])
    check(status == 0 and err == "", f"main: exit {status}: {err}")
    check_output(os.path.join(WORK, "main", "m"), originals, config, vocab, merges)

    # A variable that is not GPT-2's (OpenAI's checkpoints have none) is left out, and named.
    os.makedirs(os.path.join(WORK, "extra"))
    sys.modules["tensorflow"] = fake_tensorflow(os.path.join(ckpt, "model.ckpt"),
                                                dict(variables, **{"model/step": np.zeros(1, np.float32)}))
    status, err = run_main(converter, [ckpt, os.path.join(WORK, "extra", "m")])
    check(status == 0 and err == "gpt2-tf-to-hf: left out 1 variable that is not one of GPT-2's weights: model/step\n",
          f"an extra variable: exit {status}: {err!r}")
    check_output(os.path.join(WORK, "extra", "m"), originals, config, vocab, merges)

    # 3. Refusals: exit 1, one line naming the problem, nothing written.
    out = os.path.join(WORK, "refused")
    os.makedirs(out)

    def refused(args, needle, variables_served=variables):
        sys.modules["tensorflow"] = fake_tensorflow(os.path.join(args[0], "model.ckpt"), variables_served)
        status, err = run_main(converter, args)
        check(status == 1 and err.startswith("gpt2-tf-to-hf: ") and err.count("\n") == 1 and needle in err,
              f"{args}: exit {status}: {err!r}, wanted {needle!r}")
        check(os.listdir(out) == [], f"{args} left {os.listdir(out)} behind")

    dest = os.path.join(out, "m")
    refused([ckpt, os.path.join(WORK, "main", "m")], "m: already exists; name a new directory")
    refused([ckpt, os.path.join(out, "no", "m")], "no such directory to write m in")
    refused([os.path.join(WORK, "main", "m"), dest], "already in Hugging Face's layout: give it to attn --model")
    refused([os.path.join(WORK, "nowhere"), dest], "not a directory; SRC is the directory gpt_download.py wrote")
    wrong = dict(variables)
    wrong["model/h1/attn/c_attn/w"] = wrong["model/h1/attn/c_attn/w"][:, :, :-1]
    n_embd = config["n_embd"]
    refused([ckpt, dest], f"model/h1/attn/c_attn/w has shape [1, {n_embd}, {3 * n_embd - 1}] where hparams.json "
            f"asks for [1, {n_embd}, {3 * n_embd}]", wrong)
    missing = {k: v for k, v in variables.items() if k != "model/ln_f/b"}
    refused([ckpt, dest], "the checkpoint has no variable model/ln_f/b", missing)
    sys.modules["tensorflow"] = None  # what `import tensorflow` meets where it is not installed
    status, err = run_main(converter, [ckpt, dest])
    check(status == 1 and "needs TensorFlow, as chapter 5 of the book does" in err and os.listdir(out) == [],
          f"without TensorFlow: exit {status}: {err!r}")
    for k, (name, data, needle) in enumerate((("vocab.bpe", merges.split(b"\n", 1)[1], "vocab.bpe: the first line is not"),
                               ("encoder.json", b'{"a": 0}', "encoder.json has 1 token, but hparams.json's n_vocab"),
                               ("hparams.json", b'{"n_vocab": 2}', "hparams.json: n_ctx is null"),
                               ("hparams.json", None, "no hparams.json; SRC is the directory the book's"))):
        broken = os.path.join(WORK, f"broken-{k}")
        shutil.copytree(ckpt, broken)
        if data is None:
            os.remove(os.path.join(broken, name))
        else:
            open(os.path.join(broken, name), "wb").write(data)
        refused([broken, dest], needle)

    # Without NumPy (python3 -S leaves out dist-packages, where Debian's NumPy is): one line, not a traceback.
    no_numpy = subprocess.run([sys.executable, "-S", SCRIPT, ckpt, dest], capture_output=True, text=True)
    check(no_numpy.returncode == 1 and no_numpy.stderr.startswith("gpt2-tf-to-hf: needs NumPy")
          and no_numpy.stderr.count("\n") == 1 and os.listdir(out) == [],
          f"without NumPy: exit {no_numpy.returncode}: {no_numpy.stderr!r}")

    # 4. A failure while writing (here the disk, simulated) leaves no half-written DEST and no temporary.
    def full_disk(*_args):
        raise OSError(28, "No space left on device")
    sys.modules["tensorflow"] = fake_tensorflow(os.path.join(ckpt, "model.ckpt"), variables)
    converter.write_safetensors, kept = full_disk, converter.write_safetensors
    status, err = run_main(converter, [ckpt, dest])
    converter.write_safetensors = kept
    check(status == 1 and err == "gpt2-tf-to-hf: [Errno 28] No space left on device\n" and os.listdir(out) == [],
          f"a full disk: exit {status}: {err!r}, left {os.listdir(out)}")
    print("ok")


main()
