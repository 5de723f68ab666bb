"""Profiler cost: the per-op overhead cases (10-element tensors) and a small MLP step, with no
profile running and inside a running profile, against PyTorch doing the same with its profiler.

With no profile, Ember's bindings run unchanged (the op observer is swapped in only while a
profile runs); what remains is one relaxed load in the fast paths, the engine and the allocator.
That residue is measured build against build (benchmarks/compare_builds.py bench_overhead) and
reported in docs/performance.md; this file gives the cost per recorded event.

    PYTHONPATH=build/python python benchmarks/bench_profiler.py [--json out.json]
"""

from __future__ import annotations

import numpy as np

import ember
from common import REFERENCE, Bench, torch


def _cases(lib, a, b, w, x):
    def step():
        y = lib.relu(lib.matmul(x, w)).sum()
        y.backward()
        w.grad = None

    return [
        ("a + b", lambda: a + b),
        ("a.sum()", lambda: a.sum()),
        ("a[3]", lambda: a[3]),
        ("exp(a)", lambda: lib.exp(a)),
        ("mlp fwd+bwd 16x64", step),
    ]


def run(threads=(1,), repeat=15):
    if REFERENCE != "torch":
        print("bench_profiler: needs PyTorch as the reference (its profiler); skipped")
        return []
    results = []
    x = np.arange(10, dtype=np.float32)
    xm = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    wm = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    ember_args = (ember.from_numpy(x.copy()), ember.from_numpy(x[::-1].copy()),
                  ember.from_numpy(wm.copy()).requires_grad_(), ember.from_numpy(xm.copy()))
    torch_args = (torch.from_numpy(x.copy()), torch.from_numpy(x[::-1].copy()),
                  torch.from_numpy(wm.copy()).requires_grad_(), torch.from_numpy(xm.copy()))
    for n in threads:
        print(f"== profiler cost, {n} thread(s), vs {REFERENCE}")
        bench = Bench(threads=n, repeat=repeat)
        for (name, fe), (_, ft) in zip(_cases(ember, *ember_args), _cases(torch, *torch_args)):
            bench.compare(f"{name} (no profile)", fe, ft)
        # Inside a running profile: both profilers record every call (and keep the events,
        # a few hundred thousand here, until the profiles end).
        with ember.profiler.profile(), torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU]):
            for (name, fe), (_, ft) in zip(_cases(ember, *ember_args),
                                           _cases(torch, *torch_args)):
                bench.compare(f"{name} (profiling)", fe, ft)
        results += bench.results
    return results


if __name__ == "__main__":
    import argparse
    import json

    from common import environment

    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the results here")
    options = parser.parse_args()
    out = run()
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"environment": environment(), "results": [r.as_dict() for r in out]}, f,
                      indent=1)
