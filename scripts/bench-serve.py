#!/usr/bin/env python3
"""Latency of attn serve on loopback: p50 and p99 of /api/simple and /api/mha (docs/performance.md).

Starts `attn serve --port 0` (build/attn unless --attn names another), sends N sequential GET requests to
each address on one keep-alive connection (http.client), and prints a Markdown table with the machine's CPU.
Each request is timed from sending it to reading the whole answer; the first few are a warm-up, not counted.
Python's standard library only. Not a test: nothing here asserts a time.

    python3 scripts/bench-serve.py            # 200 requests per address
    python3 scripts/bench-serve.py -n 1000
    python3 scripts/bench-serve.py --quick    # 20 requests: a smoke run
    python3 scripts/bench-serve.py --all      # also every lesson's /api and /page (attn list --json)
"""
import argparse
import json
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The book's lessons as a class would ask for them: the default inputs, and one with a typed sentence.
ADDRESSES = [
    "/api/simple",
    "/api/mha",
    "/api/mha?text=Your%20journey%20starts%20with%20one%20step&seed=5",
]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(re.findall(r"\b(avx2|avx512f)\b", f.read()))
        return " ".join(sorted(flags)) or "neither avx2 nor avx512f"
    except OSError:
        return "unknown"


def percentile(sorted_values, p):
    """The p-th percentile by nearest rank (p in 0..100)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), int(round(p / 100.0 * len(sorted_values) + 0.5))))
    return sorted_values[rank - 1]


def start_server(attn):
    proc = subprocess.Popen([attn, "serve", "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.match(r"attn: serving on http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        proc.kill()
        sys.exit("bench-serve: attn serve did not start: " + line.strip())
    return proc, int(m.group(1))


def measure(port, address, n, warmup):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    times = []
    size = 0
    for i in range(warmup + n):
        start = time.perf_counter()
        conn.request("GET", address)
        res = conn.getresponse()
        body = res.read()
        took = time.perf_counter() - start
        if res.status != 200:
            sys.exit("bench-serve: %s answered %d: %s" % (address, res.status, body[:200]))
        if i >= warmup:
            times.append(took * 1000.0)
        size = len(body)
    conn.close()
    times.sort()
    return times, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=200, help="requests per address (default 200)")
    parser.add_argument("--quick", action="store_true", help="20 requests per address: a smoke run")
    parser.add_argument("--all", action="store_true",
                        help="also /api/LESSON and /page/LESSON for every lesson attn list names, and the tour")
    parser.add_argument("--attn", default=os.path.join(ROOT, "build", "attn"), help="the attn executable")
    args = parser.parse_args()
    n = 20 if args.quick else args.n
    warmup = 3 if args.quick else 10
    addresses = list(ADDRESSES)
    if args.all:
        names = [lesson["name"] for lesson in json.loads(subprocess.check_output([args.attn, "list", "--json"]))]
        addresses += ["/%s/%s" % (kind, name) for kind in ("api", "page") for name in names + ["tour"]]
        addresses = list(dict.fromkeys(addresses))
    proc, port = start_server(args.attn)
    try:
        rows = [(address,) + measure(port, address, n, warmup) for address in addresses]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = "killed after 5 s"
    print("attn serve on loopback, %d sequential requests per address on one keep-alive connection" % n)
    print("(after %d not counted); CPU: %s (%s), %d cores\n" % (warmup, cpu_model(), cpu_flags(), os.cpu_count()))
    print("| address | answer | p50 | p99 | mean |")
    print("| --- | --- | --- | --- | --- |")
    for address, times, size in rows:
        print("| `%s` | %s KB | %.1f ms | %.1f ms | %.1f ms |" % (
            address, format(round(size / 1000), ","), percentile(times, 50), percentile(times, 99),
            statistics.fmean(times)))
    if status != 0:
        sys.exit("bench-serve: attn serve ended with %s on SIGTERM" % status)


if __name__ == "__main__":
    main()
