"""Transcendental and arithmetic elementwise ops on 1e7 float32: Ember vs PyTorch vs NumPy,
1 and 2 threads.

Runs each library in one process, alternating, and prints median times (ms) and the ratio
Ember / PyTorch. Run with PYTHONPATH pointing at the build tree, and PyTorch importable:

    PYTHONPATH=build/python python benchmarks/bench_unary_math.py [--n 10000000] [--reps 15]
"""

import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:  # the comparison still runs against NumPy
    torch = None


def timeit(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


CASES = {
    "exp": (lambda m, a, b, c: m.exp(a)),
    "log": (lambda m, a, b, c: m.log(b)),
    "tanh": (lambda m, a, b, c: m.tanh(a)),
    "sigmoid": (lambda m, a, b, c: m.sigmoid(a)),
    "sqrt": (lambda m, a, b, c: m.sqrt(b)),
    "sin": (lambda m, a, b, c: m.sin(a)),
    "add": (lambda m, a, b, c: a + b),
    "mul": (lambda m, a, b, c: a * b),
    "a*b+c": (lambda m, a, b, c: a * b + c),
    "a*b+c[bcast]": None,  # filled below: c broadcast along rows
    "a > b": (lambda m, a, b, c: a > b),
    "a * 2.0": (lambda m, a, b, c: a * 2.0),
    "maximum": (lambda m, a, b, c: m.maximum(a, b)),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--threads", type=str, default="1,2")
    p.add_argument("--ops", type=str, default="")
    args = p.parse_args()

    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(args.n).astype(np.float32)
    b_np = (rng.random(args.n).astype(np.float32) + 0.5)
    c_np = rng.standard_normal(args.n).astype(np.float32)
    rows = 1000
    cb_np = rng.standard_normal(args.n // rows).astype(np.float32)

    libs = {"ember": (ember, ember.from_numpy)}
    if torch is not None:
        libs["torch"] = (torch, torch.from_numpy)

    ops = [o for o in CASES if not args.ops or o in args.ops.split(",")]
    for nt in [int(x) for x in args.threads.split(",")]:
        ember.set_num_threads(nt)
        if torch is not None:
            torch.set_num_threads(nt)
        print(f"--- {nt} thread(s), n = {args.n}")
        print(f"{'op':14s} {'ember':>9s} {'torch':>9s} {'numpy':>9s} {'ember/torch':>12s}")
        for op in ops:
            res = {}
            for name, (mod, wrap) in libs.items():
                a, b, c = wrap(a_np), wrap(b_np), wrap(c_np)
                if op == "a*b+c[bcast]":
                    a2 = a.reshape(rows, -1)
                    b2 = b.reshape(rows, -1)
                    cb = wrap(cb_np)
                    res[name] = timeit(lambda a2=a2, b2=b2, cb=cb: a2 * b2 + cb, args.reps)
                else:
                    fn = CASES[op]
                    res[name] = timeit(lambda fn=fn, mod=mod, a=a, b=b, c=c: fn(mod, a, b, c),
                                       args.reps)
            if op == "a*b+c[bcast]":
                a2, b2 = a_np.reshape(rows, -1), b_np.reshape(rows, -1)
                res["numpy"] = timeit(lambda: a2 * b2 + cb_np, args.reps)
            else:
                try:
                    res["numpy"] = timeit(lambda fn=CASES[op]: fn(np, a_np, b_np, c_np),
                                          args.reps)
                except AttributeError:  # no NumPy function of that name (sigmoid)
                    res["numpy"] = float("nan")
            t = res.get("torch", float("nan"))
            print(f"{op:14s} {res['ember']:9.2f} {t:9.2f} {res['numpy']:9.2f} "
                  f"{res['ember'] / t:12.2f}")
        # Kernels alone: preallocated outputs (out=), so allocation and page faults drop out.
        print(f"{'out= (kernel)':14s}")
        for op in ("exp", "add", "mul"):
            res = {}
            for name, (mod, wrap) in libs.items():
                a, b, o = wrap(a_np), wrap(b_np), wrap(np.empty_like(a_np))
                fn = {"exp": lambda: mod.exp(a, out=o), "add": lambda: mod.add(a, b, out=o),
                      "mul": lambda: mod.mul(a, b, out=o)}[op]
                res[name] = timeit(fn, args.reps)
            o_np = np.empty_like(a_np)
            np_fn = {"exp": lambda: np.exp(a_np, out=o_np),
                     "add": lambda: np.add(a_np, b_np, out=o_np),
                     "mul": lambda: np.multiply(a_np, b_np, out=o_np)}[op]
            res["numpy"] = timeit(np_fn, args.reps)
            t = res.get("torch", float("nan"))
            print(f"{op + ' out=':14s} {res['ember']:9.2f} {t:9.2f} {res['numpy']:9.2f} "
                  f"{res['ember'] / t:12.2f}")


if __name__ == "__main__":
    main()
