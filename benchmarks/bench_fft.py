"""ember.fft against the faster of numpy.fft and torch.fft (PyTorch's CPU wheel: MKL or
pocketfft): complex fft and real rfft in float32 of 2**20 points, of the prime 1048573 (Bluestein)
and of 64 rows of 4096, at 1 and 2 threads. The libraries are timed block by block in turn in one
process (median of `--repeat` blocks of about `--target-s` each); the ratio is Ember's time over
the faster reference's (goal: at most 1.0).

    python benchmarks/bench_fft.py [--threads 1 2] [--repeat 7] [--target-s 0.05] [--quick]
        [--json benchmarks/results/fft.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

import ember

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import environment, set_threads, timed_block  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - depends on the benchmark environment
    torch = None

CASES = (("2**20", (2**20,)), ("prime 1048573", (1048573,)), ("64x4096", (64, 4096)))
QUICK_CASES = (("2**16", (2**16,)), ("prime 65537", (65537,)), ("16x1024", (16, 1024)))


def run(threads, repeat, target_s, cases):
    set_threads(threads)
    rng = np.random.default_rng(0)
    rows = []
    for label, shape in cases:
        x = rng.standard_normal(shape, dtype=np.float32)
        c = (x + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(np.complex64)
        for op, data in (("fft", c), ("rfft", x)):
            e = ember.from_numpy(data)
            fns = {
                "ember": lambda e=e, op=op: getattr(ember.fft, op)(e),
                "numpy": lambda d=data, op=op: getattr(np.fft, op)(d),
            }
            if torch is not None:
                t = torch.from_numpy(data)
                fns["torch"] = lambda t=t, op=op: getattr(torch.fft, op)(t)
            times = {name: [] for name in fns}
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s))
            ms = {name: statistics.median(v) * 1e3 for name, v in times.items()}
            ref = min((n for n in ms if n != "ember"), key=ms.get)
            row = {
                "name": f"{op} {label}",
                "threads": threads,
                "ms": ms,
                "reference": ref,
                "ratio": ms["ember"] / ms[ref],
            }
            rows.append(row)
            others = "  ".join(f"{n} {v:8.3f} ms" for n, v in ms.items() if n != "ember")
            print(
                f"  {row['name']:<22} [{threads} thr]  ember {ms['ember']:8.3f} ms  {others}  "
                f"ratio {row['ratio']:.2f} (vs {ref})"
            )
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--target-s", type=float, default=0.05)
    ap.add_argument("--quick", action="store_true", help="small sizes, to check the script runs")
    default_json = os.path.join(os.path.dirname(__file__), "results", "fft.json")
    ap.add_argument("--json", default=default_json)
    args = ap.parse_args()
    cases = QUICK_CASES if args.quick else CASES
    rows = []
    for threads in args.threads:
        rows += run(threads, args.repeat, args.target_s, cases)
    if not args.quick:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "results": rows}, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
