"""ember.distributions against torch.distributions in an RL-style policy loop: per step, build
Normal(mu, sigma) and Categorical(logits) for a batch of observations, draw an rsample / sample,
take log_prob and entropy, and sum them (the loss of a policy-gradient step, without the
backward). Tensors are small (batch 64-256), so the per-call Python overhead of the constructors
and log_prob dominates. Goal: Ember at most 0.8x PyTorch's time (ratio <= 0.8).

    PYTHONPATH=build/python python benchmarks/bench_distributions.py [--quick]
        [--validate-args] [--json benchmarks/results/distributions.json]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

import ember
import ember.distributions as ED
from common import REFERENCE, Bench, environment, torch


def policy_step(lib, dist, mu, sigma, logits):
    n = dist.Normal(mu, sigma)
    a = n.rsample()
    c = dist.Categorical(logits=logits)
    k = c.sample()
    return n.log_prob(a).sum() + n.entropy().sum() + c.log_prob(k).sum() + c.entropy().sum()


def run(batches=(64, 256), steps=200, repeat=7, validate=False):
    if REFERENCE != "torch":
        raise SystemExit("bench_distributions compares with torch.distributions: install PyTorch")
    ED.Distribution.set_default_validate_args(validate)
    torch.distributions.Distribution.set_default_validate_args(validate)
    rng = np.random.default_rng(0)
    results = []
    bench = Bench(threads=1, repeat=repeat)
    for b in batches:
        mu = rng.normal(size=(b, 4)).astype(np.float32)
        sigma = rng.uniform(0.5, 2.0, size=(b, 4)).astype(np.float32)
        logits = rng.normal(size=(b, 6)).astype(np.float32)
        e = [ember.from_numpy(v.copy()) for v in (mu, sigma, logits)]
        t = [torch.from_numpy(v.copy()) for v in (mu, sigma, logits)]

        def loop_ember():
            for _ in range(steps):
                policy_step(ember, ED, *e)

        def loop_torch():
            for _ in range(steps):
                policy_step(torch, torch.distributions, *t)

        name = f"policy step x{steps}, batch {b}, validate_args={validate}"
        r = bench.compare(name, loop_ember, loop_torch)
        if r is not None:
            results.append(r)
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps and repeats (smoke run)")
    ap.add_argument("--validate-args", action="store_true")
    default_json = os.path.join(os.path.dirname(__file__), "results", "distributions.json")
    ap.add_argument("--json", default=default_json)
    args = ap.parse_args()
    steps, repeat = (20, 3) if args.quick else (200, 7)
    rows = []
    for validate in [True] if args.validate_args else [False, True]:
        rows += [r.as_dict() for r in run(steps=steps, repeat=repeat, validate=validate)]
    if not args.quick:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "results": rows}, f, indent=1)
        print(f"wrote {args.json}")
