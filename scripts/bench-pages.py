#!/usr/bin/python3
"""Size and render time of the --format html pages, for docs/performance.md.

    /usr/bin/python3 scripts/bench-pages.py [RUNS]     (default 7; needs build/attn and `bash scripts/deps.sh test`'s
                                                        Chromium, chromium-driver and python3-selenium)

For each lesson's page and the tour's: its size in bytes, the time attn takes to write it (wall clock, the
median of RUNS), and in headless Chromium (one browser, networking off, the page loaded RUNS times from
file://) the median time from navigation start to the end of the load event (parsing, style, layout, the
script) and to the second animation frame after it (a frame drawn with everything on it: an upper bound,
as it includes a WebDriver round trip). Not part of the tests: timings belong to a machine.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "browser"))
import drive  # noqa: E402  (tests/browser/drive.py: the browser the tests use)

ATTN = os.path.join(HERE, "..", "build", "attn")
LOAD = "performance.getEntriesByType('navigation')[0].loadEventEnd"
FRAME = ("var done = arguments[0];"
         " requestAnimationFrame(function () { requestAnimationFrame(function () { done(performance.now()); }); });")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    names = subprocess.run([ATTN, "list", "--json"], check=True, capture_output=True, text=True).stdout
    lessons = [l["name"] for l in json.loads(names)] + ["tour"]
    driver = drive.browser()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in lessons:
            path = os.path.join(tmp, name + ".html")
            writes = []
            for _ in range(runs):
                start = time.perf_counter()
                with open(path, "wb") as f:
                    subprocess.run([ATTN, name, "--format", "html"], check=True, stdout=f)
                writes.append(time.perf_counter() - start)
            loads, paints = [], []
            for _ in range(runs):
                drive.act(driver, {"do": "load", "url": "file://" + path})
                paints.append(driver.execute_async_script(FRAME))
                loads.append(drive.act(driver, {"do": "eval", "js": LOAD}))
            rows.append((name, os.path.getsize(path), statistics.median(writes) * 1000, statistics.median(loads),
                         statistics.median(paints)))
    driver.quit()
    print("| page | size | attn writes it | Chromium: load event end | Chromium: drawn |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, size, write, load, paint in rows:
        print(f"| {name} | {size / 1000:,.1f} kB | {write:.0f} ms | {load:.0f} ms | {paint:.0f} ms |")


if __name__ == "__main__":
    main()
