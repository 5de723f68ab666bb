"""1024x1024 float32 matmul: Ember vs PyTorch vs NumPy, alternating in one process.

    python benchmarks/bench_matmul.py [--threads 1 2] [--n 1024] [--repeat 30]

Each thread count runs in a fresh subprocess (BLAS thread pools read their size at start-up),
with OMP/OpenBLAS/MKL thread variables set before any library loads. PyTorch is optional: it is
imported from the current environment, or from $TORCH_SITE (a site-packages directory).
Prints the median time of each library and the ratios.
"""

import argparse
import os
import subprocess
import sys
import time


def run_one(n, threads, repeat):
    site = os.environ.get("TORCH_SITE")
    if site:
        sys.path.insert(0, site)
    import numpy as np

    import ember

    try:
        import torch
    except ImportError:
        torch = None
    ember.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    ea, eb = ember.tensor(a), ember.tensor(b)
    cands = {"ember": lambda: ea @ eb, "numpy": lambda: a @ b}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        cands["torch"] = lambda: ta @ tb
    times = {k: [] for k in cands}
    for f in cands.values():  # warm-up (primitive creation, page faults)
        f()
        f()
    for _ in range(repeat):
        for k, f in cands.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    gflops = 2 * n**3 / 1e9
    line = f"threads={threads} n={n}: " + ", ".join(
        f"{k} {med[k] * 1e3:.2f} ms ({gflops / med[k]:.0f} GFLOP/s)" for k in med)
    ratios = ", ".join(f"ember/{k} {med['ember'] / med[k]:.2f}x" for k in med if k != "ember")
    print(line + " | " + ratios, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        run_one(args.n, args.child, args.repeat)
        return
    for t in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t),
                   MKL_NUM_THREADS=str(t))
        subprocess.run([sys.executable, __file__, "--child", str(t), "--n", str(args.n),
                        "--repeat", str(args.repeat)], env=env, check=True)


if __name__ == "__main__":
    main()
