"""Optimizer steps: one step() over the parameters of a 784-256-256-10 MLP (about 270 000
parameters in 6 tensors) and over 200 small tensors (per-parameter overhead), for SGD with
momentum, Adam, AdamW (amsgrad) and RMSprop, against torch.optim (its CPU default, the
for-loop implementation) at 1 and 2 threads.

    PYTHONPATH=build/python python benchmarks/bench_optim.py
"""

from __future__ import annotations

import numpy as np

import ember
from common import REFERENCE, Bench, torch

MLP_SHAPES = [(784, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
SMALL_SHAPES = [(16,)] * 200

CASES = [
    ("SGD momentum", "SGD", dict(lr=0.01, momentum=0.9)),
    ("Adam", "Adam", dict(lr=1e-3)),
    ("AdamW amsgrad", "AdamW", dict(lr=1e-3, amsgrad=True)),
    ("RMSprop centered", "RMSprop", dict(lr=1e-3, centered=True)),
]


def _setup(lib, shapes, name, kwargs, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    params = []
    for s in shapes:
        p = lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32))
        params.append(p)
    opt = getattr(lib.optim, name)(params, **kwargs)
    opt.step()  # allocate the state outside the timing
    return opt


def run(threads=(1, 2), repeat=15):
    results = []
    if REFERENCE != "torch":
        print("bench_optim needs PyTorch as the reference; skipped")
        return results
    for n in threads:
        print(f"== optimizer step, {n} thread(s), vs {REFERENCE}")
        bench = Bench(threads=n, repeat=repeat)
        for label, name, kwargs in CASES:
            for what, shapes in (("MLP 784-256-256-10", MLP_SHAPES), ("200 x 16", SMALL_SHAPES)):
                e_opt = _setup(ember, shapes, name, kwargs)
                t_opt = _setup(torch, shapes, name, kwargs)
                bench.compare(f"{label}, {what}", e_opt.step, t_opt.step)
        results += bench.results
    return results


if __name__ == "__main__":
    run()
