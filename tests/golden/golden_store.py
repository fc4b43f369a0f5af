"""Where the golden configurations live: tests/golden/lessons/, one file per configuration.

One file each, so that tests/test_golden.cpp registers one test case per configuration: a failure names
its configuration, and ctest -j spreads them over the cores. index.json holds what made them (the
generator, PyTorch's version) and, in order, each configuration's file, lesson and arguments; the suite
reads only the index to name its cases. NNN.json holds one configuration: {"lesson", "args", "steps"},
each step {"id", "shape", "data"} and, where OpenBLAS's AVX2 kernels end in other last bits,
"data_haswell" (blas_variants.py).

Needs no PyTorch: generate.py and blas_variants.py write through it, gen_print_cases.py reads.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "lessons")


def write(cases, torch_version):
    """Replaces every configuration file with `cases`, in their order, and the index."""
    os.makedirs(DIR, exist_ok=True)
    for name in os.listdir(DIR):
        if name.endswith(".json"):
            os.remove(os.path.join(DIR, name))
    index = []
    for number, case in enumerate(cases):
        file = f"{number:03d}.json"
        with open(os.path.join(DIR, file), "w", encoding="utf-8") as f:
            # NaN and inf go as strings (generate.encode), never as NaN/Infinity tokens.
            json.dump({"lesson": case["lesson"], "args": case["args"], "steps": case["steps"]}, f,
                      allow_nan=False)
            f.write("\n")
        index.append({"file": file, "lesson": case["lesson"], "args": case["args"]})
    with open(os.path.join(DIR, "index.json"), "w", encoding="utf-8") as f:  # one configuration a line
        head = json.dumps({"generator": "tests/golden/generate.py", "torch": torch_version})
        f.write(head[:-1] + ', "cases": [\n')
        f.write(",\n".join(json.dumps(entry, ensure_ascii=False) for entry in index))
        f.write("\n]}\n")


def read():
    """(the torch version, every configuration in order) as write() took them."""
    with open(os.path.join(DIR, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    cases = []
    for entry in index["cases"]:
        with open(os.path.join(DIR, entry["file"]), encoding="utf-8") as f:
            cases.append(json.load(f))
    return index["torch"], cases
