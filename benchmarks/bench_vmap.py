"""Per-sample gradients with vmap(grad(...)) against torch.func, and against a Python loop.

The issue 17 workload: a 3-layer MLP (784-128-128-10) with cross-entropy, batch 256,
``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)`` built on ``functional_call``. Goals: at
most 0.8x torch.func's time, and at least 5x faster than looping ``grad`` over the samples.

    PYTHONPATH=build/python python benchmarks/bench_vmap.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import ember
from common import REFERENCE, Bench, environment, format_result, torch
from ember.func import functional_call as e_call
from ember.func import grad as e_grad
from ember.func import vmap as e_vmap


def build(lib, call, batch, rng):
    sizes = [(128, 784), (128, 128), (10, 128)]
    params = {}
    for i, (o, n) in enumerate(sizes):
        params[f"{2 * i}.weight"] = lib.from_numpy(
            rng.normal(0, n**-0.5, (o, n)).astype(np.float32)
        )
        params[f"{2 * i}.bias"] = lib.from_numpy(np.zeros(o, np.float32))
    model = lib.nn.Sequential(
        lib.nn.Linear(784, 128),
        lib.nn.ReLU(),
        lib.nn.Linear(128, 128),
        lib.nn.ReLU(),
        lib.nn.Linear(128, 10),
    )
    x = lib.from_numpy(rng.normal(size=(batch, 784)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, batch))

    def loss(p, xb, yb):
        out = call(model, p, (xb.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yb.unsqueeze(0))

    return params, x, y, loss


def run(batch=256, repeat=7, loop_samples=32):
    if REFERENCE != "torch":
        raise SystemExit("bench_vmap compares with torch.func: install PyTorch")
    rng = np.random.default_rng(0)
    ep, ex, ey, eloss = build(ember, e_call, batch, rng)
    rng = np.random.default_rng(0)
    tp, tx, ty, tloss = build(torch, torch.func.functional_call, batch, rng)
    e_fn = e_vmap(e_grad(eloss), in_dims=(None, 0, 0))
    t_fn = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))
    ge, gt = e_fn(ep, ex, ey), t_fn(tp, tx, ty)
    for k in ge:
        np.testing.assert_allclose(ge[k].numpy(), gt[k].numpy(), rtol=1e-4, atol=1e-5)
    results = []
    for threads in (1, 2):
        bench = Bench(threads=threads, repeat=repeat)
        r = bench.compare(
            f"per-sample grads, MLP 784-128-128-10, batch {batch}",
            lambda: e_fn(ep, ex, ey),
            lambda: t_fn(tp, tx, ty),
        )
        # The Python loop of grad over samples (timed on a subset, scaled to the batch).
        g = e_grad(eloss)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for i in range(loop_samples):
                g(ep, ex[i], ey[i])
            best = min(best, (time.perf_counter() - t0) * batch / loop_samples)
        r.extra["python_loop_s"] = best
        r.extra["speedup_over_loop"] = best / r.ember_s
        print(format_result(r), f"  loop {best * 1e3:.1f} ms -> {best / r.ember_s:.1f}x")
        results.append(r)
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    default_json = os.path.join(os.path.dirname(__file__), "results", "vmap.json")
    ap.add_argument("--json", default=default_json)
    args = ap.parse_args()
    rows = [r.as_dict() for r in run(repeat=3 if args.quick else 7)]
    if not args.quick:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "results": rows}, f, indent=1)
        print(f"wrote {args.json}")
