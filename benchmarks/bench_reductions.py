"""Reductions: Ember vs PyTorch (and NumPy) side by side, alternating, median times.

    PYTHONPATH=build/python python benchmarks/bench_reductions.py [--threads 1 2] [--repeat 30]
"""

import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:  # the reference is optional: Ember timings still print
    torch = None


def timeit(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def bench(name, ember_fn, torch_fn, repeat):
    # Alternate the two libraries so that machine noise hits both alike.
    te, tt = [], []
    for _ in range(3):
        te += timeit(ember_fn, repeat // 3)
        if torch_fn is not None:
            tt += timeit(torch_fn, repeat // 3)
    me = statistics.median(te) * 1e3
    if tt:
        mt = statistics.median(tt) * 1e3
        print(f"  {name:28s} ember {me:8.3f} ms   torch {mt:8.3f} ms   ratio {me / mt:5.2f}")
    else:
        print(f"  {name:28s} ember {me:8.3f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(10_000_000).astype(np.float32)
    b = rng.standard_normal((1000, 10000)).astype(np.float32)
    ea, eb = ember.tensor(a), ember.tensor(b)
    ta = torch.from_numpy(a) if torch else None
    tb = torch.from_numpy(b) if torch else None
    cases = [
        ("sum 1e7 float32", lambda: ea.sum(), lambda: ta.sum()),
        ("max(dim=1) (1000,10000)", lambda: eb.max(1), lambda: tb.max(1)),
        ("max(dim=0) (1000,10000)", lambda: eb.max(0), lambda: tb.max(0)),
        ("amax(dim=1)", lambda: eb.amax(1), lambda: tb.amax(1)),
        ("amax(dim=0)", lambda: eb.amax(0), lambda: tb.amax(0)),
        ("sum(dim=1)", lambda: eb.sum(1), lambda: tb.sum(1)),
        ("sum(dim=0)", lambda: eb.sum(0), lambda: tb.sum(0)),
        ("mean 1e7", lambda: ea.mean(), lambda: ta.mean()),
        ("max 1e7", lambda: ea.max(), lambda: ta.max()),
        ("argmax 1e7", lambda: ea.argmax(), lambda: ta.argmax()),
        ("var 1e7", lambda: ea.var(), lambda: ta.var()),
        ("var(dim=0)", lambda: eb.var(0), lambda: tb.var(0)),
        ("norm 1e7", lambda: ea.norm(), lambda: ta.norm()),
        ("cumsum(dim=1)", lambda: eb.cumsum(1), lambda: tb.cumsum(1)),
        ("cumsum(dim=0)", lambda: eb.cumsum(0), lambda: tb.cumsum(0)),
        ("logsumexp(dim=1)", lambda: eb.logsumexp(1), lambda: tb.logsumexp(1)),
        ("all 1e7", lambda: (ea > 0).all() if hasattr(ea, "__gt__") else ea.all(),
         lambda: ta.all()),
    ]
    for n in args.threads:
        ember.set_num_threads(n)
        if torch:
            torch.set_num_threads(n)
        print(f"threads={n}")
        for name, fe, ft in cases:
            if name == "all 1e7":
                fe, ft = (lambda: ea.all()), (lambda: ta.all()) if torch else None
            bench(name, fe, ft if torch else None, args.repeat)


if __name__ == "__main__":
    main()
