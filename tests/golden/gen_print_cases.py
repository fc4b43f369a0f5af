#!/usr/bin/python3
"""PyTorch's own print() of many float32 tensors, for tests/test_torch_print.cpp.

    /usr/bin/python3 tests/golden/gen_print_cases.py

Writes tests/golden/print_cases.json: each case has `shape`, `data` (the float32 bit patterns,
row-major, so inf/-inf/nan and exact values survive) and `printed` (str(tensor)). It also prints every
tensor the numeric-extreme configurations of tests/golden/lessons/ hold (inputs named ext_*), so run
tests/golden/generate.py first."""
import json
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def bits(t):
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in t.reshape(-1).tolist()]


def cases():
    g = torch.Generator().manual_seed(31415)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    out = [torch.tensor(1.8524), torch.tensor(0.0), torch.tensor(-3.0), torch.tensor(float("-inf")),
           torch.tensor(float("nan")), torch.tensor(1e-7), torch.tensor(123456789.0),
           torch.tensor([]), torch.zeros(0, 3), torch.zeros(2, 0, 4)]
    for n in range(1, 41):                       # 1-d wrapping at 80 columns
        out.append(randn(n))
    for n in (13, 17, 25, 40):
        out.append(torch.arange(n, dtype=torch.float32))               # int mode
        out.append(torch.arange(n, dtype=torch.float32) * 12345.0)     # int mode turning scientific
    for scale in (1e-6, 1e-4, 1e-3, 0.1, 1.0, 10.0, 999.0, 1e4, 1e8, 1e9):
        out.append(randn(4, 5, scale=scale))
        out.append(torch.rand(7, generator=g) * scale)
    out += [torch.zeros(3, 4), -torch.zeros(2, 2), torch.ones(6, 6) * 2,
            torch.tensor([0.99995, 1.0, 0.5]), torch.tensor([-0.00004, 0.5]), torch.tensor([-0.00001, 0.00001]),
            torch.tensor([9.99995, -99.99995]), torch.tensor([1e-5, 1.0]), torch.tensor([0.0001, 0.1]),
            torch.tensor([1000.0, 1.0]), torch.tensor([1001.0, 1.0]), torch.tensor([1e8, 1.0]),
            torch.tensor([float("inf"), float("-inf"), float("nan")]),
            torch.tensor([float("inf"), 2.0, float("nan"), -3.0]),
            torch.tensor([[float("-inf")] * 4, [0.5, float("-inf"), 0.25, 1.0]]),
            torch.tensor([float("nan"), 0.1234]), torch.tensor([-float("nan"), 1.0])]
    # Non-finite values, -0.0, denormals and the largest float32: the format comes from the finite non-zero
    # values only (-0.0 is a zero), and nan/inf/-inf are right-aligned to its width in every mode.
    nan, inf, big = float("nan"), float("inf"), 3.4028234663852886e38
    out += [torch.tensor([-0.0, 0.0]), torch.tensor(-0.0), torch.tensor([-0.0]), torch.tensor([nan, inf]),
            torch.tensor([nan, nan]), torch.tensor([[nan, nan], [nan, nan]]), torch.tensor(inf),
            torch.tensor([nan, inf, 1.5, 1e-5]), torch.tensor([-0.0, 1e-40, 1.0]), torch.tensor([-nan, -inf]),
            torch.tensor([inf, -inf, 0.5, 0.25]), torch.tensor([inf, 2.0, -0.0]), torch.tensor([nan, 1e9, 3.0]),
            torch.tensor([1e-45]), torch.tensor([1e-45, -1e-45, 0.0, -0.0]), torch.tensor([big, -big]),
            torch.tensor([big, 1.0, nan]), torch.tensor([-big, 0.5]), torch.tensor([1e-40, 1e-38, 1e-45, 1.0]),
            torch.tensor([-0.0, 0.5, -0.25]), torch.tensor([-0.0, -0.00001]), torch.tensor([-0.0, -3.0, 12.0]),
            torch.tensor([[1.0, -inf, -inf], [nan, nan, nan], [0.25, 0.75, -inf]]),
            torch.tensor([1e20, -1e20, 3e19, 0.0]), torch.tensor([1e20, 0.0, inf]), torch.tensor([1e8, -0.0]),
            torch.tensor([nan, -0.0, 1e-4, 0.1]), torch.tensor([-inf, 123456.0, -0.0]),
            torch.full((40,), nan), torch.cat([torch.full((1001,), nan), torch.tensor([1e-9])]),
            torch.cat([torch.tensor([1e-9]), torch.full((1000,), 0.5), torch.tensor([inf, 1e12])])]
    mask = torch.triu(torch.ones(6, 6), diagonal=1).bool()
    scores = torch.rand(6, 6, generator=g)
    out.append(scores.masked_fill(mask, -torch.inf))
    out.append(torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1))
    out.append(torch.tril(torch.ones(6, 6)))
    for shape in [(2, 6, 2), (2, 6, 4), (2, 2, 6, 6), (1, 1, 1, 1), (3, 1, 2), (2, 3, 1, 5), (4, 16), (6, 12)]:
        out.append(randn(*shape))
    # Summarisation past 1000 elements, on every dimension longer than 6 and not on the others.
    for shape in [(1001,), (1100,), (40, 40), (1001, 1), (1, 1001), (3, 20, 20), (2, 7, 8, 10), (6, 200),
                  (7, 150), (2, 12, 1024 // 12, 2), (8, 1024)]:
        out.append(randn(*shape))
    out.append(torch.arange(2000, dtype=torch.float32))
    out.append(randn(30, 40, scale=1e-5))
    big = randn(40, 40)
    big[0, 0] = 1e-9          # hidden by summarisation? no: row 0 col 0 is shown
    big[20, 20] = 1e12        # hidden: does not change the format
    out.append(big)
    # Random ranks, sizes and scales, with zeros, whole numbers and non-finite values sprinkled in.
    for i in range(60):
        rank = int(torch.randint(0, 5, (1,), generator=g))
        shape = [int(d) for d in torch.randint(1, 8, (rank,), generator=g)]
        scale = 10.0 ** float(torch.empty(1).uniform_(-6, 9, generator=g))
        t = randn(*shape, scale=scale) if shape else randn(1, scale=scale)[0]
        flat = t.reshape(-1)
        for _ in range(int(torch.randint(0, 3, (1,), generator=g))):
            k = int(torch.randint(0, flat.numel(), (1,), generator=g))
            flat[k] = [0.0, float("-inf"), float("inf"), float("nan"), 7.0, -2.0][i % 6]
        if i % 5 == 0:
            t = torch.round(t)
        out.append(t)
    return out


def integer_cases():
    """Integer tensors (torch.int64, as torch.arange gives), printed without a decimal point. Their values
    fit float32 exactly, so `data` holds them as float32 bits like the other cases."""
    g = torch.Generator().manual_seed(2718)
    out = [torch.tensor(0), torch.tensor(-42), torch.arange(4) // 2, torch.arange(12) // 1, torch.arange(8) // 4,
           torch.tensor([[-3, 120], [7, 0]]), torch.arange(1500), torch.arange(40).reshape(5, 8) - 20,
           torch.arange(2000).reshape(2, 1000)]
    for shape in [(3,), (30,), (4, 5), (2, 3, 4), (2, 2, 2, 3)]:
        out.append(torch.randint(-100000, 100000, shape, generator=g))
    return out


def extreme_step_cases():
    """Every tensor step of the numeric-extreme golden configurations, each distinct print once."""
    import golden_store
    _, cases = golden_store.read()
    decode = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
    out, seen = [], set()
    for case in cases:
        if not any(a.startswith("inputs/ext_") for a in case["args"]):
            continue
        for step in case["steps"]:
            if step["id"] in ("row_2_sum", "num_params", "kv_group_of_head"):  # Python numbers, int64
                continue
            flat = []

            def walk(x):
                if isinstance(x, list):
                    for e in x:
                        walk(e)
                else:
                    flat.append(decode[x] if isinstance(x, str) else float(x))
            walk(step["data"])
            t = torch.tensor(flat, dtype=torch.float32).reshape(step["shape"])
            key = (tuple(step["shape"]), str(t))
            if key not in seen:
                seen.add(key)
                out.append(t)
    return out


def main():
    result = []
    for t in cases() + extreme_step_cases():
        t = t.to(torch.float32).contiguous()
        result.append({"shape": list(t.shape), "data": bits(t), "printed": str(t)})
    for t in integer_cases():
        assert t.dtype == torch.int64
        result.append({"shape": list(t.shape), "data": bits(t.to(torch.float32).contiguous()), "printed": str(t),
                       "dtype": "int64"})
    for r in result:
        assert "grad_fn" not in r["printed"] and "dtype" not in r["printed"], r["printed"]
    with open(os.path.join(HERE, "print_cases.json"), "w") as f:
        json.dump({"generator": "tests/golden/gen_print_cases.py", "torch": torch.__version__, "cases": result}, f)
        f.write("\n")
    print(f"{len(result)} cases written to tests/golden/print_cases.json")


if __name__ == "__main__":
    main()
