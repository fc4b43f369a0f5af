#!/usr/bin/env python3
"""Convert the GPT-2 that the book's gpt_download.py downloads into the four files `attn --model` reads.

    python3 gpt2-tf-to-hf.py SRC DEST

SRC is what chapter 5's gpt_download.py leaves in gpt2/124M (or 355M, 774M, 1558M): checkpoint,
hparams.json, encoder.json, vocab.bpe and TensorFlow's model.ckpt.data-00000-of-00001, model.ckpt.index
and model.ckpt.meta. DEST, which must not exist yet, gets Hugging Face's layout of the same model:
config.json, model.safetensors, vocab.json and merges.txt (docs/gpt2.md).

It needs what a reader of the book already has: TensorFlow, to read the checkpoint (tf.train.load_variable,
as gpt_download.py does), and NumPy. model.safetensors is written with the `safetensors` package when it
is installed, otherwise by a plain writer of the format (an 8-byte little-endian header length, a JSON
header, the raw data), so that package is optional.

The script has two halves. read_checkpoint() is the only code that uses TensorFlow. Everything after it
(hf_tensors, hf_config, vocab_json, merges_txt, write_hf) takes NumPy arrays and bytes, and this module
imports without TensorFlow, so the tests check those parts on a tiny model without TensorFlow.

DEST is written to a temporary directory beside it and renamed at the end, so a failure or an interrupt
never leaves half a model. Exit status: 0 converted, 1 refused or failed (one line on stderr), 2 bad
arguments, 130 interrupted (Ctrl-C).
"""

import json
import os
import re
import shlex
import shutil
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # one line, as every other refusal, rather than a traceback
    sys.exit("gpt2-tf-to-hf: needs NumPy, as chapter 5 of the book does (pip install numpy); the python3 that "
             "runs this script has none")

PROG = "gpt2-tf-to-hf"

# What gpt_download.py downloads, besides the checkpoint's own files.
TOKENIZER_FILES = ("encoder.json", "vocab.bpe")
HF_FILES = ("config.json", "model.safetensors", "vocab.json", "merges.txt")


class Refused(Exception):
    """An input this script cannot convert, or an output it cannot write: one line, exit 1."""


# ---------------------------------------------------------------------------------------------------
# The reading half: the only part that needs TensorFlow.


def check_source_layout(src):
    """Refuses SRC unless it is the directory gpt_download.py writes; returns the checkpoint's prefix."""
    if not os.path.isdir(src):
        raise Refused(f"{src}: not a directory; SRC is the directory gpt_download.py wrote (e.g. gpt2/124M)")
    if os.path.exists(os.path.join(src, "config.json")):
        raise Refused(f"{src}: holds config.json, so it is already in Hugging Face's layout: "
                      "give it to attn --model as it is")
    needed = ("hparams.json",) + TOKENIZER_FILES + ("model.ckpt.index",)
    missing = [name for name in needed if not os.path.isfile(os.path.join(src, name))]
    if missing:
        raise Refused(f"{src}: no {', '.join(missing)}; SRC is the directory the book's gpt_download.py "
                      "wrote (checkpoint, hparams.json, encoder.json, vocab.bpe, model.ckpt.*)")
    return os.path.join(src, "model.ckpt")


def read_checkpoint(src):
    """hparams, {TensorFlow variable name: array}, encoder.json's bytes and vocab.bpe's bytes from SRC."""
    prefix = check_source_layout(src)
    hparams = read_hparams(os.path.join(src, "hparams.json"))
    check_hparams(hparams)  # before the checkpoint, which takes a while to read
    try:
        import tensorflow as tf  # only here: the rest of the script runs without it
    except ImportError:
        raise Refused("reading a TensorFlow checkpoint needs TensorFlow, as chapter 5 of the book does "
                      "(pip install tensorflow); or download Hugging Face's four files instead (docs/gpt2.md)")
    # As gpt_download.py does: the `checkpoint` file names the checkpoint; without it, model.ckpt.
    path = tf.train.latest_checkpoint(src) or prefix
    arrays = {}
    for name, _shape in tf.train.list_variables(path):
        arrays[name] = np.asarray(tf.train.load_variable(path, name))
    return hparams, arrays, read_bytes(os.path.join(src, "encoder.json")), read_bytes(os.path.join(src, "vocab.bpe"))


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_hparams(path):
    try:
        hparams = json.loads(read_bytes(path).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused(f"{path}: not JSON ({e})")
    if not isinstance(hparams, dict):
        raise Refused(f"{path}: not a JSON object of settings")
    return hparams


# ---------------------------------------------------------------------------------------------------
# The converting and writing half: NumPy arrays and bytes in, files out. No TensorFlow.


def check_hparams(hparams):
    """The five numbers GPT-2's hparams.json holds, each a positive whole number."""
    out = {}
    for key in ("n_vocab", "n_ctx", "n_embd", "n_head", "n_layer"):
        value = hparams.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise Refused(f"hparams.json: {key} is {json.dumps(value)}, not a positive whole number")
        out[key] = value
    if out["n_embd"] % out["n_head"]:
        raise Refused(f"hparams.json: n_embd {out['n_embd']} is not a multiple of n_head {out['n_head']}")
    return out


def tensor_names(hp):
    """(TensorFlow name, Hugging Face name, Hugging Face shape) for every tensor of GPT-2, in HF's order.

    OpenAI's model.py names a block's variables model/hL/{ln_1,attn,ln_2,mlp}/..., a LayerNorm's g and b,
    and a projection's w and b, w being (1, in, out): its conv1d. Hugging Face's Conv1D keeps the same
    (in, out) layout without the leading 1, so no weight is transposed, only renamed and squeezed."""
    E, V, P = hp["n_embd"], hp["n_vocab"], hp["n_ctx"]
    out = [("model/wte", "wte.weight", (V, E)), ("model/wpe", "wpe.weight", (P, E))]
    for layer in range(hp["n_layer"]):
        tf, hf = f"model/h{layer}/", f"h.{layer}."
        for part, width in (("ln_1", E), ("ln_2", E)):
            out += [(tf + part + "/g", hf + part + ".weight", (width,)), (tf + part + "/b", hf + part + ".bias", (width,))]
        for part, n_in, n_out in (("attn/c_attn", E, 3 * E), ("attn/c_proj", E, E),
                                  ("mlp/c_fc", E, 4 * E), ("mlp/c_proj", 4 * E, E)):
            hf_part = part.replace("/", ".")
            out += [(tf + part + "/w", hf + hf_part + ".weight", (n_in, n_out)),
                    (tf + part + "/b", hf + hf_part + ".bias", (n_out,))]
    out += [("model/ln_f/g", "ln_f.weight", (E,)), ("model/ln_f/b", "ln_f.bias", (E,))]
    return out


def hf_tensors(hparams, arrays):
    """{Hugging Face name: little-endian float32 array} from {TensorFlow name: array}, every shape checked.

    Variables that are not GPT-2's (none in OpenAI's checkpoints) are left out and named on stderr."""
    hp = check_hparams(hparams)
    out = {}
    for tf_name, hf_name, shape in tensor_names(hp):
        if tf_name not in arrays:
            raise Refused(f"the checkpoint has no variable {tf_name} (hparams.json: n_layer {hp['n_layer']}); "
                          "is it GPT-2's?")
        a = np.asarray(arrays[tf_name])
        if not np.issubdtype(a.dtype, np.floating):
            raise Refused(f"the checkpoint's {tf_name} is {a.dtype}, not floating point")
        accepted = [shape] + ([(1,) + shape] if tf_name.endswith("/w") else [])
        if a.shape not in accepted:
            raise Refused(f"the checkpoint's {tf_name} has shape {list(a.shape)} where hparams.json asks for "
                          f"{list(accepted[-1])}")
        out[hf_name] = np.ascontiguousarray(a.reshape(shape), dtype="<f4")
    extra = sorted(set(arrays) - {t for t, _, _ in tensor_names(hp)})
    if extra:
        what = "1 variable that is not one of GPT-2's weights" if len(extra) == 1 else \
            f"{len(extra)} variables that are not GPT-2's weights"
        print(f"{PROG}: left out {what}: {shown(', '.join(extra[:5]))}"
              + (" ..." if len(extra) > 5 else ""), file=sys.stderr)
    return out


def hf_config(hparams):
    """config.json for Hugging Face's GPT2Config: hparams.json's numbers under its names, GPT-2's defaults."""
    hp = check_hparams(hparams)
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": hp["n_vocab"],
        "n_positions": hp["n_ctx"],
        "n_ctx": hp["n_ctx"],
        "n_embd": hp["n_embd"],
        "n_layer": hp["n_layer"],
        "n_head": hp["n_head"],
        "n_inner": None,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-05,
    }


def vocab_json(encoder, hparams):
    """vocab.json: encoder.json, the same token -> id map, kept byte for byte once it is checked."""
    try:
        vocab = json.loads(encoder.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused(f"encoder.json: not JSON ({e})")
    if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
        raise Refused("encoder.json: not a JSON object of token ids")
    n_vocab = check_hparams(hparams)["n_vocab"]
    if len(vocab) != n_vocab:
        tokens = "1 token" if len(vocab) == 1 else f"{len(vocab)} tokens"
        raise Refused(f"encoder.json has {tokens}, but hparams.json's n_vocab is {n_vocab}")
    return encoder


def merges_txt(bpe):
    """merges.txt: vocab.bpe, the same merges in rank order after a "#version: 0.2" line.

    OpenAI's encoder.py skips vocab.bpe's first line whatever it holds; attn and Hugging Face skip it only
    when it starts with "#version", so a first line that does not is refused rather than read as a merge."""
    try:
        text = bpe.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(f"vocab.bpe: not UTF-8 ({e})")
    if not text.startswith("#version"):
        raise Refused("vocab.bpe: the first line is not the \"#version: 0.2\" line GPT-2's vocab.bpe starts with")
    return bpe


def safetensors_bytes(tensors, metadata):
    """The safetensors format, written out by hand for when the package is missing: an 8-byte little-endian
    header length, the JSON header (each tensor's dtype, shape and [begin, end) offsets into the data,
    padded with spaces to a multiple of 8 bytes), then the tensors' bytes. Yields the file's pieces."""
    header, offset = {"__metadata__": metadata}, 0
    for name, a in tensors.items():
        if a.dtype != np.dtype("<f4"):
            raise ValueError(f"{name}: the plain writer writes little-endian float32 only")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    yield len(text).to_bytes(8, "little") + text
    for a in tensors.values():
        yield memoryview(a).cast("B")  # the array's own bytes, not a copy


def write_safetensors(tensors, path, plain=None):
    """model.safetensors at `path`: with the safetensors package if it is installed (unless `plain`),
    else with the plain writer above."""
    metadata = {"format": "pt"}  # what Hugging Face's transformers asks of a GPT-2 checkpoint
    if not plain:
        try:
            from safetensors.numpy import save_file
        except ImportError:
            plain = True
        else:
            save_file(tensors, path, metadata=metadata)
            return
    with open(path, "wb") as f:
        for piece in safetensors_bytes(tensors, metadata):
            f.write(piece)


def check_dest(dest):
    """DEST normalised and its parent, refused if DEST exists or its parent does not."""
    dest = os.path.normpath(dest)
    if os.path.lexists(dest):
        raise Refused(f"{dest}: already exists; name a new directory for the converted model")
    parent = os.path.dirname(dest) or "."
    if not os.path.isdir(parent):
        raise Refused(f"{parent}: no such directory to write {os.path.basename(dest)} in")
    return dest, parent


def write_hf(dest, hparams, arrays, encoder, bpe, plain=None):
    """Writes DEST (which must not exist) whole, or nothing: the files go to a temporary directory beside
    it, renamed to DEST once all four are written."""
    dest, parent = check_dest(dest)
    # Everything is checked before anything is written.
    config, tensors = hf_config(hparams), hf_tensors(hparams, arrays)
    vocab, merges = vocab_json(encoder, hparams), merges_txt(bpe)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".partial-", dir=parent)
    try:
        with open(os.path.join(tmp, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        write_safetensors(tensors, os.path.join(tmp, "model.safetensors"), plain)
        for name, data in (("vocab.json", vocab), ("merges.txt", merges)):
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes it 0700; DEST is an ordinary directory
        if os.path.lexists(dest):  # made while we wrote: never replace it
            raise Refused(f"{dest}: was made while the model was being written; nothing was changed")
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def shown(text):
    """`text` as it is safe to print on a terminal, as attn's own messages are: the bytes of a file name
    that are not UTF-8, control characters (C0, DEL, C1) and the bidirectional overrides escaped."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return re.sub("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
                  lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{{{ord(m.group()):04x}}}",
                  text)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(
        prog=PROG, description="Convert the GPT-2 checkpoint the book's gpt_download.py downloads (a TensorFlow "
        "checkpoint) into the Hugging Face files attn --model reads.")
    parser.add_argument("src", metavar="SRC", help="the directory gpt_download.py wrote, e.g. gpt2/124M")
    parser.add_argument("dest", metavar="DEST", help="a new directory for config.json, model.safetensors, "
                        "vocab.json and merges.txt")
    args = parser.parse_args(argv)
    try:
        check_dest(args.dest)  # before the checkpoint is read, which takes a while
        hparams, arrays, encoder, bpe = read_checkpoint(args.src)
        write_hf(args.dest, hparams, arrays, encoder, bpe)
    except Refused as e:
        print(f"{PROG}: {shown(str(e))}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PROG}: {shown(str(e))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; {shown(os.path.normpath(args.dest))} was not written", file=sys.stderr)
        return 130
    dest = os.path.normpath(args.dest)
    print(f"{PROG}: wrote {shown(dest)} ({', '.join(HF_FILES)}); try: attn mha --model {shown(shlex.quote(dest))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
