"""How long `import ember` takes in a fresh interpreter, against `import torch` and `import numpy`
(issue 13's goal: under 0.25 s). Each import runs in its own new process, several times; the
table gives the median and the fastest. The interpreter's own start-up is measured the same way
and subtracted, so the figures are the import alone.

    PYTHONPATH=build/python python benchmarks/bench_import.py [--runs 15] [--json out.json]
    ... --top 10      # also list the ten slowest modules of one `python -X importtime -c ...`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def one_run(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    return time.perf_counter() - start


def measure(module: str | None, runs: int) -> list[float]:
    code = f"import {module}" if module else "pass"
    one_run(code)  # warm the page cache: later runs measure start-up, not the disk
    return [one_run(code) for _ in range(runs)]


def slowest_modules(module: str, top: int) -> list[tuple[int, str]]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in result.stderr.splitlines():
        # "import time: self [us] | cumulative | imported package"
        parts = line.split("|")
        if len(parts) != 3 or not line.startswith("import time:"):
            continue
        try:
            self_us = int(parts[0].split(":")[1])
        except ValueError:
            continue
        rows.append((self_us, parts[2].strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    baseline = measure(None, args.runs)
    base = statistics.median(baseline)
    print(f"interpreter start-up alone: median {base * 1e3:.1f} ms ({args.runs} runs)")
    results = {"startup_s": base, "imports": {}}
    for module in ("ember", "numpy", "torch"):
        try:
            times = measure(module, args.runs)
        except subprocess.CalledProcessError:
            print(f"import {module}: not installed in {sys.executable}")
            continue
        median = statistics.median(times) - base
        fastest = min(times) - base
        results["imports"][module] = {"median_s": median, "fastest_s": fastest}
        print(f"import {module:6s} median {median * 1e3:7.1f} ms   fastest {fastest * 1e3:7.1f} ms")
    if "ember" in results["imports"]:
        verdict = "met" if results["imports"]["ember"]["median_s"] < 0.25 else "NOT met"
        print(f"goal import ember < 0.25 s: {verdict}")
    if args.top:
        print("slowest modules of one `import ember` (self time, -X importtime):")
        for self_us, name in slowest_modules("ember", args.top):
            print(f"  {self_us / 1e3:7.1f} ms  {name}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
