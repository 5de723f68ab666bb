"""How long `import ember` takes in a fresh interpreter, against `import numpy` and `import torch`
(issue 13's goal: under 0.25 s). Each import runs in its own new process, several times, timed
inside that process around the import statement; the table gives the median and the fastest.

The children write bytecode caches (__pycache__), as a user's Python does: environments that set
PYTHONDONTWRITEBYTECODE (this project's sandbox does) would otherwise recompile all of Ember's
Python sources on every import, which more than doubles the time.

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


def child_env() -> dict:
    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def one_run(module: str) -> float:
    code = (
        "import time; start = time.perf_counter(); "
        f"import {module}; print(time.perf_counter() - start)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, env=child_env(), capture_output=True, text=True
    )
    return float(result.stdout.strip().splitlines()[-1])


def measure(module: str, runs: int) -> list[float]:
    one_run(module)  # writes the bytecode caches and warms the page cache
    return [one_run(module) for _ in range(runs)]


def slowest_modules(module: str, top: int) -> list[tuple[int, str]]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        check=True,
        env=child_env(),
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

    results = {"imports": {}}
    for module in ("ember", "numpy", "torch"):
        try:
            times = measure(module, args.runs)
        except subprocess.CalledProcessError:
            print(f"import {module}: not installed in {sys.executable}")
            continue
        median = statistics.median(times)
        fastest = min(times)
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
