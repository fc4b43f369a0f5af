#!/usr/bin/python3
"""The golden steps whose last bits depend on OpenBLAS's kernels, for CPUs without AVX-512.

PyTorch's products (nn.Linear, @) go through OpenBLAS, which picks its kernels by CPU: SkylakeX's on
AVX-512 CPUs, Haswell's on AVX2 ones (AMD's Zen runs those too). They add the same products in other
orders for some shapes, so a few steps differ in their last bits, in PyTorch and in attn alike: both
equal on the same machine, and test_golden.cpp holds attn to the values of the kernels it runs on.

Run after generate.py, with Debian's python3-torch, on any CPU with AVX2:

    /usr/bin/python3 tests/golden/blas_variants.py

It recomputes every configuration that loads no model under OPENBLAS_CORETYPE=Haswell and, in
tests/golden/lessons/, gives each step whose values differ a "data_haswell" beside its "data"
(earlier "data_haswell" entries are recomputed). Nothing else in the file changes.
"""
import os
import sys

# OpenBLAS reads its core when the library loads, so before torch is imported.
os.environ["OPENBLAS_CORETYPE"] = "Haswell"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402  (after the environment is set)
import golden_store  # noqa: E402


def main():
    core = generate.openblas_core()
    if core != "Haswell":
        sys.exit(f"OpenBLAS runs its {core} kernels, not Haswell's (does this CPU have AVX2?)")
    torch_version, cases = golden_store.read()
    by_args = {(c["lesson"], tuple(c["args"])): c for c in cases}
    recomputed = generate.blas_cases()
    differing = 0
    for case in recomputed:
        stored = by_args.get((case["lesson"], tuple(case["args"])))
        if stored is None:
            sys.exit(f"attn {case['lesson']} {' '.join(case['args'])} is not in tests/golden/lessons/: rerun generate.py")
        if [s["id"] for s in stored["steps"]] != [s["id"] for s in case["steps"]]:
            sys.exit(f"attn {case['lesson']} {' '.join(case['args'])} has other steps: rerun generate.py")
        for old, new in zip(stored["steps"], case["steps"]):
            old.pop("data_haswell", None)
            if old["shape"] != new["shape"]:
                sys.exit(f"{old['id']} of attn {case['lesson']} has another shape: rerun generate.py")
            if old["data"] != new["data"]:
                old["data_haswell"] = new["data"]
                differing += 1
                print(f"attn {case['lesson']} {' '.join(case['args'])}: {old['id']}")
    golden_store.write(cases, torch_version)
    print(f"{differing} steps of {len(recomputed)} configurations differ on Haswell's kernels; "
          "their values written to tests/golden/lessons/ as data_haswell")


if __name__ == "__main__":
    main()
