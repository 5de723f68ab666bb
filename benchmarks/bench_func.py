"""Jacobians and forward-mode AD against torch.func / torch.autograd.forward_ad.

Issue 17's workloads:
- ``jacfwd`` and ``jacrev`` of f(x) = tanh(W @ x + b), 100 -> 100, float32;
- a forward-mode JVP (``forward_ad`` dual tensors) through a 3-layer MLP (784-256-256-10, GELU,
  batch 64), the tangent on the input: every node there carries an explicit JVP formula
  (docs/design/forward-ad.md), so one JVP costs about one extra forward.

    PYTHONPATH=build/python python benchmarks/bench_func.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

import ember
from common import REFERENCE, Bench, environment, format_result


def jacobian_case(lib, rng):
    w = lib.from_numpy(rng.normal(0, 0.1, (100, 100)).astype(np.float32))
    b = lib.from_numpy(rng.normal(0, 0.1, 100).astype(np.float32))
    x = lib.from_numpy(rng.normal(size=100).astype(np.float32))
    return (lambda v: lib.tanh(w @ v + b)), x


def mlp_case(lib, rng, batch):
    sizes = [(256, 784), (256, 256), (10, 256)]
    params = [
        (
            lib.from_numpy(rng.normal(0, n**-0.5, (o, n)).astype(np.float32)),
            lib.from_numpy(np.zeros(o, np.float32)),
        )
        for o, n in sizes
    ]
    x = lib.from_numpy(rng.normal(size=(batch, 784)).astype(np.float32))
    v = lib.from_numpy(rng.normal(size=(batch, 784)).astype(np.float32))
    F = lib.nn.functional

    def mlp(h):
        for i, (w, b) in enumerate(params):
            h = F.linear(h, w, b)
            if i + 1 < len(params):
                h = F.gelu(h)
        return F.log_softmax(h, dim=1)

    fwad = lib.autograd.forward_ad

    def jvp():
        with fwad.dual_level():
            return fwad.unpack_dual(mlp(fwad.make_dual(x, v))).tangent

    return jvp, mlp, x


def run(repeat=7, batch=64):
    if REFERENCE != "torch":
        raise SystemExit("bench_func compares with torch.func: install PyTorch")
    import torch.autograd.forward_ad  # noqa: F401  (lib.autograd.forward_ad below)

    ef, ex = jacobian_case(ember, np.random.default_rng(0))
    tf, tx = jacobian_case(torch, np.random.default_rng(0))
    e_jvp, e_mlp, e_in = mlp_case(ember, np.random.default_rng(1), batch)
    t_jvp, t_mlp, t_in = mlp_case(torch, np.random.default_rng(1), batch)
    # Same values before timing.
    for e_t, t_t in (
        (ember.func.jacfwd(ef)(ex), torch.func.jacfwd(tf)(tx)),
        (ember.func.jacrev(ef)(ex), torch.func.jacrev(tf)(tx)),
        (e_jvp(), t_jvp()),
    ):
        np.testing.assert_allclose(e_t.numpy(), t_t.numpy(), rtol=2e-4, atol=2e-5)
    results = []
    for threads in (1, 2):
        bench = Bench(threads=threads, repeat=repeat)
        rows = [
            bench.compare(
                "jacfwd, tanh(W x + b), 100 -> 100",
                lambda: ember.func.jacfwd(ef)(ex),
                lambda: torch.func.jacfwd(tf)(tx),
            ),
            bench.compare(
                "jacrev, tanh(W x + b), 100 -> 100",
                lambda: ember.func.jacrev(ef)(ex),
                lambda: torch.func.jacrev(tf)(tx),
            ),
            bench.compare(
                f"forward_ad jvp, MLP 784-256-256-10 GELU, batch {batch}",
                e_jvp,
                t_jvp,
            ),
        ]
        # The JVP's cost in forwards: one dual evaluation against one plain forward.
        plain = bench.compare(
            f"forward only, MLP 784-256-256-10 GELU, batch {batch}",
            lambda: e_mlp(e_in),
            lambda: t_mlp(t_in),
        )
        rows[2].extra["ember_jvp_over_forward"] = rows[2].ember_s / plain.ember_s
        rows[2].extra["torch_jvp_over_forward"] = rows[2].ref_s / plain.ref_s
        rows.append(plain)
        for r in rows:
            print(format_result(r))
        print(
            f"  jvp / forward: ember {rows[2].extra['ember_jvp_over_forward']:.2f}x, "
            f"torch {rows[2].extra['torch_jvp_over_forward']:.2f}x"
        )
        results.extend(rows)
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    default_json = os.path.join(os.path.dirname(__file__), "results", "func.json")
    ap.add_argument("--json", default=default_json)
    args = ap.parse_args()
    rows = [r.as_dict() for r in run(repeat=3 if args.quick else 7)]
    if not args.quick:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "results": rows}, f, indent=1)
        print(f"wrote {args.json}")
