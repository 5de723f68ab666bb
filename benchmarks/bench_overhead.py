"""Per-op overhead on tiny tensors (10 elements): the cost of dispatch, argument parsing,
allocation and returning a Python object, where no kernel time hides it.

Goal: Ember at most 0.5x PyTorch's time per call (ratio <= 0.5).

    PYTHONPATH=build/python python benchmarks/bench_overhead.py
"""

from __future__ import annotations

import numpy as np

import ember
from common import REFERENCE, Bench, torch


def run(threads=(1,), repeat=25):
    results = []
    x = np.arange(10, dtype=np.float32)
    a, b = ember.from_numpy(x.copy()), ember.from_numpy(x[::-1].copy())
    if REFERENCE == "torch":
        ta, tb = torch.from_numpy(x.copy()), torch.from_numpy(x[::-1].copy())
        zeros_ref = torch.zeros
    else:
        ta, tb = x.copy(), x[::-1].copy()
        zeros_ref = np.zeros
    for n in threads:
        print(f"== overhead, 10-element float32 tensors, {n} thread(s), vs {REFERENCE}")
        bench = Bench(threads=n, repeat=repeat)
        bench.compare("a + b", lambda: a + b, lambda: ta + tb)
        bench.compare("a.sum()", lambda: a.sum(), lambda: ta.sum())
        bench.compare("a[3]", lambda: a[3], lambda: ta[3])
        if REFERENCE == "torch":
            bench.compare("a.view(2, 5)", lambda: a.view(2, 5), lambda: ta.view(2, 5))
        else:  # NumPy's closest equivalent of a view with a new shape
            bench.compare("a.view(2, 5)", lambda: a.view(2, 5), lambda: ta.reshape(2, 5))
        bench.compare("zeros(10)", lambda: ember.zeros(10), lambda: zeros_ref(10))
        results += bench.results
    return results


if __name__ == "__main__":
    run()
