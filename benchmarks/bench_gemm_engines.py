"""float32 GEMMs at transformer shapes: Ember's default engine choice against the same products
with its packed AVX-512 kernel switched off (oneDNN, or OpenBLAS where that rule applies) and
against PyTorch, timed alternately in one process.

The shapes are the products of a BERT-base encoder at 8 x 128 tokens (m = 1024) and at half
padding (m = 512), and of the language model in bench_lm_training.py (m = 4096 tokens): forward
Linears x W^T + bias ("NT", F.linear) and input gradients G W ("NN", mm). Note [A packed float32
GEMM for wide products] (csrc/kernels/cpu/gemm_packed_kernels.cpp) says which of them the packed
kernel takes: on Intel AVX-512 cores only; elsewhere "auto" and "off" run the same engine.

Each thread count runs in its own process. Per shape: the median of `--repeat` rounds (each
round times auto, off and torch once, in an order rotated every round), GFLOP/s, the ratios,
and the fraction of `--peak-gflops` per core times the thread count.

    PYTHONPATH=build/python python benchmarks/bench_gemm_engines.py [--threads 1 2]
        [--repeat 15] [--peak-gflops 152] [--json benchmarks/results/gemm_engines.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# (layout, m, k, n, what)
SHAPES = [
    ("NT", 1024, 768, 2304, "BERT qkv"),
    ("NT", 1024, 768, 3072, "BERT fc1"),
    ("NT", 1024, 768, 768, "BERT out-proj"),
    ("NT", 1024, 3072, 768, "BERT fc2"),
    ("NT", 512, 768, 2304, "BERT qkv, half padded"),
    ("NT", 512, 768, 3072, "BERT fc1, half padded"),
    ("NT", 4096, 256, 768, "LM qkv"),
    ("NT", 4096, 256, 1024, "LM fc1"),
    ("NT", 4096, 256, 8192, "LM head"),
    ("NN", 4096, 768, 256, "LM qkv input grad"),
    ("NN", 4096, 1024, 256, "LM fc2 input grad"),
    ("NN", 4096, 8192, 256, "LM head input grad"),
]


def run_threads(threads: int, repeat: int) -> list[dict]:
    import numpy as np
    import torch

    import ember

    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    set_mode = ember._C._set_packed_sgemm_mode
    rng = np.random.default_rng(0)
    rows = []
    for layout, m, k, n, what in SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        if layout == "NT":
            w = rng.standard_normal((n, k), dtype=np.float32)
            bias = rng.standard_normal(n, dtype=np.float32)
            ea, ew, eb = ember.tensor(a), ember.tensor(w), ember.tensor(bias)
            ta, tw, tb = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(bias)

            def run_ember(ea=ea, ew=ew, eb=eb):
                return ember.nn.functional.linear(ea, ew, eb)

            def run_torch(ta=ta, tw=tw, tb=tb):
                return torch.nn.functional.linear(ta, tw, tb)
        else:
            b = rng.standard_normal((k, n), dtype=np.float32)
            ea, eb = ember.tensor(a), ember.tensor(b)
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)

            def run_ember(ea=ea, eb=eb):
                return ea @ eb

            def run_torch(ta=ta, tb=tb):
                return ta @ tb
        set_mode("auto")
        y_auto = run_ember().numpy()
        set_mode("off")
        y_off = run_ember().numpy()
        times: dict[str, list[float]] = {"auto": [], "off": [], "torch": []}
        for _ in range(2):
            run_torch()
        order = ("auto", "off", "torch")
        for r in range(repeat):
            # Rotated each round: whoever runs right after PyTorch shares the cores with its
            # OpenMP threads' spin-wait, so a fixed order would favour someone.
            for who in order[r % 3:] + order[:r % 3]:
                if who != "torch":
                    set_mode(who)
                fn = run_torch if who == "torch" else run_ember
                t0 = time.perf_counter()
                fn()
                times[who].append(time.perf_counter() - t0)
        set_mode("auto")
        med = {who: statistics.median(ts) for who, ts in times.items()}
        flops = 2.0 * m * k * n
        rows.append({
            "layout": layout, "m": m, "k": k, "n": n, "what": what, "threads": threads,
            "ms": {who: t * 1e3 for who, t in med.items()},
            "gflops": {who: flops / t / 1e9 for who, t in med.items()},
            "auto_over_off": med["auto"] / med["off"],
            "auto_over_torch": med["auto"] / med["torch"],
            "off_over_torch": med["off"] / med["torch"],
            "max_rel_diff_auto_off": float(np.abs(y_auto - y_off).max()
                                           / max(1.0, np.abs(y_off).max())),
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--peak-gflops", type=float, default=152.0,
                    help="fp32 peak of one core (152: the Cascade Lake core measured here)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(run_threads(args.child, args.repeat)))
        return
    rows = []
    for threads in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, __file__, "--child", str(threads), "--repeat",
                              str(args.repeat)], env=env, check=True, capture_output=True,
                             text=True).stdout
        rows += json.loads(out.strip().splitlines()[-1])
    from common import environment

    env_info = environment()
    print(f"CPU: {env_info.get('cpu', '?')}; peak {args.peak_gflops:.0f} GFLOP/s per core")
    print(f"{'thr':>3} {'shape':<34} {'auto':>7} {'off':>7} {'torch':>7}  GFLOP/s | "
          f"auto/off auto/torch | auto % peak")
    for r in rows:
        g = r["gflops"]
        shape = f"{r['layout']} {r['m']}x{r['k']}x{r['n']} {r['what']}"
        peak = 100 * g["auto"] / (args.peak_gflops * r["threads"])
        print(f"{r['threads']:>3} {shape:<34} {g['auto']:7.1f} {g['off']:7.1f} {g['torch']:7.1f}"
              f"          |   {r['auto_over_off']:.3f}    {r['auto_over_torch']:.3f}   |"
              f"   {peak:4.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": env_info.get("cpu", "?"), "environment": env_info,
                       "peak_gflops_per_core": args.peak_gflops, "rows": rows}, f, indent=1)
        print(f"results: {args.json}")


if __name__ == "__main__":
    main()
