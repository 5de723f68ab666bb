"""float32 matrix-vector products (issue 13): nn.Linear at batch 1 and torch.mv, Ember against
PyTorch and NumPy, timed alternately in one process (median of `--repeat` blocks of about
`--target-s` each), at 1 and 2 threads. A matrix-vector product reads its matrix once, so the
limit is memory bandwidth: the table gives the matrix's bytes per second next to the times.

    python benchmarks/bench_gemv.py [--threads 1 2] [--repeat 7] [--target-s 0.05]
        [--json benchmarks/results/gemv]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

SHAPES = ((768, 768), (3072, 768), (768, 3072), (4096, 4096))  # out_features, in_features


def child(threads, repeat, target_s, out_path):
    import numpy as np

    import ember

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment, timed_block

    try:
        import torch
    except ImportError:
        torch = None
    ember.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    results = []
    for n, k in SHAPES:
        w = rng.standard_normal((n, k), dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        x = rng.standard_normal((1, k), dtype=np.float32)
        ew, eb, ex = ember.from_numpy(w), ember.from_numpy(b), ember.from_numpy(x)
        fns = {"ember_linear": lambda: ember.nn.functional.linear(ex, ew, eb),
               "ember_mv": lambda: ember.mv(ew, ex[0]),
               "numpy_mv": lambda: w @ x[0]}
        if torch is not None:
            tw, tb, tx = torch.from_numpy(w), torch.from_numpy(b), torch.from_numpy(x)
            fns["torch_linear"] = lambda: torch.nn.functional.linear(tx, tw, tb)
            fns["torch_mv"] = lambda: torch.mv(tw, tx[0])
        times = {name: [] for name in fns}
        with ember.no_grad():
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s))
        ms = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        row = {"name": f"{n}x{k}", "threads": threads, "ms": ms,
               "ember_linear_gb_s": n * k * 4 / (ms["ember_linear"] * 1e-3) / 1e9}
        if torch is not None:
            row["linear_ratio_vs_torch"] = ms["ember_linear"] / ms["torch_linear"]
            row["mv_ratio_vs_torch"] = ms["ember_mv"] / ms["torch_mv"]
        results.append(row)
        torch_part = ""
        if torch is not None:
            torch_part = (f"  torch linear {ms['torch_linear']:.4f}"
                          f" (x{row['linear_ratio_vs_torch']:.2f})  torch mv"
                          f" {ms['torch_mv']:.4f} (x{row['mv_ratio_vs_torch']:.2f})")
        print(f"  {row['name']:10s} [{threads} thr] ember linear {ms['ember_linear']:.4f} ms"
              f" ({row['ember_linear_gb_s']:.0f} GB/s)  ember mv {ms['ember_mv']:.4f}"
              f"  numpy mv {ms['numpy_mv']:.4f}{torch_part}", flush=True)
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "results": results},
                      f, indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--target-s", type=float, default=0.05)
    p.add_argument("--json", default=None, help="write results (.<threads>.json appended)")
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        child(args.child, args.repeat, args.target_s, args.json)
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import run_per_thread_count

    run_per_thread_count(__file__, args.threads,
                         ["--repeat", str(args.repeat), "--target-s", str(args.target_s)],
                         args.json)


if __name__ == "__main__":
    main()
