#!/usr/bin/python3
"""Tables for scripts/bench-ort.sh (a developer tool, not part of the tests): reads the runs the script
left in its temp folder and prints one Markdown table per shape; writes the raw numbers as JSON if asked.

    report.py --runs DIR --shapes BxTxCxHxG,... --rounds R --repeats N --variants V,... \
              --ort-version X --threads N --check V=DIFF,... --reference WHAT [--load-avg A,B] [--json FILE]

DIR/<shape index>/<round>/attn.json is attn-bench's --json output (only results[].impl and median_s are
read: the rest of that document is attn-bench's own business); DIR/<shape index>/<round>/<variant>.json
is ort_run.js's {"median_s", "times_s"}.
"""
import argparse
import json
import os
import statistics
import sys

MHA_VARIANTS = ("ms_attention", "mha23")
GQA_VARIANTS = ("gqa", "gqa23")


def fail(msg):
    print(f"bench-ort: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")


def attn_medians(path):
    doc = load(path)
    out = {}
    for r in doc.get("results", []) if isinstance(doc, dict) else []:
        if isinstance(r, dict) and "impl" in r and "median_s" in r:
            out[r["impl"]] = float(r["median_s"])
    for impl in ("fused", "gqa"):
        if impl not in out:
            fail(f"{path}: attn-bench --json has no results[] entry with impl '{impl}' and a median_s")
    return out


def ms(s):
    # Three significant figures or so for the small shapes, one decimal for the real ones.
    v = s * 1e3
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 10 else f"{v:.1f}"


def spread(values, fmt):
    return f"{fmt(min(values))} – {fmt(max(values))}"


def summarize(rounds, variants):
    """Per-round medians in, the table's numbers out. The ratio is taken within each round (attn and
    ORT ran back to back there, so they shared the machine's state), then its median and range over
    rounds; ORT's best variant is the one with the lowest median over rounds, and stays the same one in
    every round so the ratio compares like with like."""
    def series(key):
        return [r[key] for r in rounds]

    out = {"attn_fused": series("attn_fused"), "attn_gqa": series("attn_gqa"),
           "ort": {v: series(v) for v in variants}}
    for kind, group, attn_key in (("mha", MHA_VARIANTS, "attn_fused"), ("gqa", GQA_VARIANTS, "attn_gqa")):
        have = [v for v in group if v in variants]
        if not have:
            continue
        best = min(have, key=lambda v: statistics.median(out["ort"][v]))
        out[f"best_{kind}"] = best
        out[f"ratio_{kind}"] = [a / o for a, o in zip(out[attn_key], out["ort"][best])]
    return out


def table(shape, s, rounds):
    b, t, c, h, g = (shape[k] for k in ("batch", "tokens", "dim", "heads", "kv_groups"))
    lines = [f"### B{b} T{t} C{c} H{h} (GQA: G{g}), {rounds} round{'s' if rounds != 1 else ''}", "",
             "| | median ms | range over rounds |", "| --- | ---: | --- |"]

    def row(label, values):
        lines.append(f"| {label} | {ms(statistics.median(values))} | {spread(values, ms)} |")

    def ratio(label, values):
        f = lambda r: f"{r:.2f}"  # noqa: E731
        lines.append(f"| **{label}** | **{f(statistics.median(values))}** | {spread(values, f)} |")

    # The MHA rows, then the GQA rows: attn's implementation, each ORT variant, ORT's best and the ratio.
    for impl, kind, variants in (("fused", "mha", MHA_VARIANTS), ("gqa", "gqa", GQA_VARIANTS)):
        row(f"attn {impl}", s[f"attn_{impl}"])
        for v in variants:
            if v in s["ort"]:
                row(f"ORT {v}", s["ort"][v])
        best = s.get(f"best_{kind}")
        if best is not None:
            row(f"ORT best {kind.upper()} ({best})", s["ort"][best])
            ratio(f"attn {impl} / ORT {best}", s[f"ratio_{kind}"])
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", required=True)
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("--ort-version", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--check", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--load-avg", default="?,?", help="1-minute load average at the start and the end")
    ap.add_argument("--json")
    a = ap.parse_args()
    variants = a.variants.split(",")
    shapes = [dict(zip(("batch", "tokens", "dim", "heads", "kv_groups"), map(int, s.split("x"))))
              for s in a.shapes.split(",")]
    check = {k: float(v) for k, v in (kv.split("=") for kv in a.check.split(","))}
    meta = {"ort_version": a.ort_version, "threads": a.threads, "rounds": a.rounds, "repeats": a.repeats}
    meta["load_avg"] = {k: float(v) if v.replace(".", "", 1).isdigit() else None
                        for k, v in zip(("start", "end"), a.load_avg.split(","))}
    doc = {**meta, "variants": variants, "check": {"reference": a.reference, "max_abs_diff": check}}
    doc["note"] = ("times in seconds; per round: attn-bench's median_s and each ORT variant's median of "
                   "repeats runs after one warm-up; ratio = attn / ORT, per round")
    doc["shapes"] = []
    print(f"ONNX Runtime {a.ort_version} (onnxruntime-node, CPU), intra-op threads {a.threads}; "
          f"attn-bench and every ORT variant: median of {a.repeats} runs after a warm-up, "
          f"{a.rounds} alternating rounds. Ratios below 1: attn is faster.")
    for i, shape in enumerate(shapes):
        rounds, ort_times = [], []
        for r in range(a.rounds):
            d = os.path.join(a.runs, str(i), str(r))
            attn = attn_medians(os.path.join(d, "attn.json"))
            ort = {v: load(os.path.join(d, v + ".json")) for v in variants}
            rounds.append({"attn_fused": attn["fused"], "attn_gqa": attn["gqa"],
                           **{v: float(ort[v]["median_s"]) for v in variants}})
            ort_times.append({v: ort[v]["times_s"] for v in variants})
        s = summarize(rounds, variants)
        print()
        print(table(shape, s, a.rounds))
        doc["shapes"].append({**shape, "rounds": rounds, "ort_times_s": ort_times, "summary": s})
    if a.json:
        try:
            with open(a.json, "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
        except OSError as e:
            fail(f"cannot write {a.json}: {e}")


if __name__ == "__main__":
    main()
