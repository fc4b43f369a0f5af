#!/usr/bin/python3
"""Round trip of every input form attn accepts: NumPy writes the book's embeddings (and a few of its
own) in each form, attn reads them (a file, or standard input), and attn's output is read back with
json and np.load and compared with what NumPy wrote. Run by tests/test_inputs.cpp as
`roundtrip.py ATTN SCRATCH_DIR`; exits non-zero, saying why, at the first difference."""
import json
import os
import subprocess
import sys

import numpy as np

ATTN, SCRATCH = sys.argv[1], sys.argv[2]
BOOK = np.array([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                 [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
TOKENS = ["Your", "journey", "starts", "with", "one", "step"]
checked = []


def path(name):
    return os.path.join(SCRATCH, name)


def attn(*args, stdin=None):
    r = subprocess.run([ATTN, *args], input=stdin, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"attn {' '.join(args)} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def check(form, args, want, tokens=None, stdin=None):
    """attn simple reads `args` (its --input); its JSON inputs and its saved .npy files are read back."""
    out_dir = path("out-" + form.replace(" ", "-"))
    doc = json.loads(attn("simple", *args, "--json", "--save-npy", out_dir, stdin=stdin))
    got = np.array(doc["inputs"]["embeddings"], dtype=np.float32)
    want32 = np.asarray(want).astype(np.float32)  # torch.tensor(rows) rounds to float32 the same way
    if got.shape != want32.shape or not np.array_equal(got, want32):
        sys.exit(f"{form}: attn read {got.tolist()}, NumPy wrote {want32.tolist()}")
    want_tokens = tokens or [f"x{i + 1}" for i in range(len(want32))]
    if doc["inputs"]["tokens"] != want_tokens:
        sys.exit(f"{form}: tokens {doc['inputs']['tokens']}, expected {want_tokens}")
    # Every step's .npy holds exactly the JSON's numbers, in the step's shape and dtype.
    for step in doc["steps"]:
        saved = np.load(os.path.join(out_dir, step["id"] + ".npy"))
        data = np.array(step["data"], dtype=saved.dtype)
        if list(saved.shape) != step["shape"] or not np.array_equal(saved, data, equal_nan=True):
            sys.exit(f"{form}: {step['id']}.npy {saved.tolist()} differs from the JSON's {step['data']}")
        if saved.dtype != np.float32:
            sys.exit(f"{form}: {step['id']}.npy is {saved.dtype}, expected float32")
    # And the values are attention's: the query's scores are its dot products with every input.
    scores = np.load(os.path.join(out_dir, "attn_scores_2.npy"))
    expect = want32 @ want32[1 if len(want32) > 1 else 0]
    if not np.allclose(scores, expect, rtol=1e-6, atol=1e-6):
        sys.exit(f"{form}: attn_scores_2 {scores.tolist()}, NumPy computes {expect.tolist()}")
    checked.append(form)


x32 = BOOK.astype(np.float32)
np.save(path("book32.npy"), x32)
check("npy float32", ["--input", path("book32.npy")], BOOK)
np.save(path("book64.npy"), BOOK)
check("npy float64", ["--input", path("book64.npy")], BOOK)
np.save(path("fortran.npy"), np.asfortranarray(x32))
check("npy Fortran order", ["--input", path("fortran.npy")], BOOK)
np.save(path("no-extension"), x32)  # np.save adds .npy; rename so only the content says what it is
os.rename(path("no-extension.npy"), path("no-extension"))
check("npy without extension", ["--input", path("no-extension")], BOOK)
with open(path("book32.npy"), "rb") as f:
    check("npy on stdin", ["--input", "-"], BOOK, stdin=f.read())

np.savetxt(path("default.txt"), BOOK)  # '%.18e', one space between columns
check("np.savetxt default", ["--input", path("default.txt")], BOOK)
np.savetxt(path("comma.csv"), BOOK, delimiter=",", header="d1,d2,d3", comments="")
check("CSV with a header row", ["--input", path("comma.csv")], BOOK)
np.savetxt(path("semicolon.csv"), BOOK, delimiter=";", fmt="%.2f", header="embeddings of the book")
check("semicolons, '# ' header", ["--input", path("semicolon.csv")], BOOK)
np.savetxt(path("tabs.tsv"), BOOK, delimiter="\t")
check("tab-separated", ["--input", path("tabs.tsv")], BOOK)
with open(path("tokens.csv"), "w") as f:
    f.write("token,d1,d2,d3\n")
    for t, row in zip(TOKENS, BOOK):
        f.write(t + "," + ",".join(repr(float(v)) for v in row) + "\n")
check("header and token column", ["--input", path("tokens.csv")], BOOK, tokens=TOKENS)
with open(path("tokens.csv"), "rb") as f:
    check("table on stdin", ["--input", "-"], BOOK, tokens=TOKENS, stdin=f.read())
with open(path("pandas.csv"), "w") as f:  # what pandas' DataFrame(BOOK).to_csv() writes: an index column
    f.write(",0,1,2\n" + "".join(f"{i}," + ",".join(repr(float(v)) for v in row) + "\n" for i, row in enumerate(BOOK)))
check("pandas to_csv with its index", ["--input", path("pandas.csv")], BOOK, tokens=[str(i) for i in range(6)])
doc = {"tokens": TOKENS, "embeddings": BOOK.tolist()}
check("JSON on stdin", ["--input", "-"], BOOK, tokens=TOKENS, stdin=json.dumps(doc).encode())

# Values that are not exactly representable: attn rounds each as float32(float64) does, as torch.tensor.
rng = np.random.default_rng(7)
odd = rng.standard_normal((5, 4)) * 10.0 ** rng.integers(-12, 12, (5, 4))
np.savetxt(path("odd.txt"), odd, fmt="%.17g")
check("17-digit values", ["--input", path("odd.txt")], odd)
np.save(path("odd.npy"), odd)
check("float64 .npy rounded", ["--input", path("odd.npy")], odd)

print(f"{len(checked)} forms round-tripped: " + "; ".join(checked))
