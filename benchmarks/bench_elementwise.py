"""Elementwise ops and reductions on 1e7 float32 elements (40 MB per tensor, far beyond the
caches), on 1 and 2 threads. For `add` the achieved memory bandwidth is printed: 12 bytes per
element (two reads, one write; write-allocate traffic not counted, as STREAM counts it), to
compare with the machine's STREAM numbers in docs/performance.md.

    PYTHONPATH=build/python python benchmarks/bench_elementwise.py

Cases whose op this Ember build lacks yet (exp, max) are skipped with a note.
"""

from __future__ import annotations

import numpy as np

import ember
from common import REFERENCE, Bench, torch

N_ROWS, N_COLS = 10_000, 1_000  # 1e7 elements
N = N_ROWS * N_COLS


def _gbs(bytes_per_elem):
    def extra(te, tr):
        nbytes = bytes_per_elem * N
        return {"ember GB/s": nbytes / te / 1e9, "ref GB/s": nbytes / tr / 1e9}

    return extra


def run(threads=(1, 2), repeat=11):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N_ROWS, N_COLS), dtype=np.float32)
    y = rng.standard_normal((N_ROWS, N_COLS), dtype=np.float32)
    row = rng.standard_normal(N_COLS, dtype=np.float32)
    col = rng.standard_normal((N_ROWS, 1), dtype=np.float32)
    arrays = dict(x=x, y=y, row=row, col=col, out=np.zeros_like(x))
    e = {k: ember.from_numpy(v.copy()) for k, v in arrays.items()}
    if REFERENCE == "torch":
        r = {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}
        ref_exp, ref_max = torch.exp, (lambda t: t.max(1))
    else:
        r = {k: v.copy() for k, v in arrays.items()}
        ref_exp, ref_max = np.exp, (lambda t: t.max(1))
    results = []
    for n in threads:
        print(f"== elementwise and reductions, 1e7 float32, {n} thread(s), vs {REFERENCE}")
        b = Bench(threads=n, repeat=repeat, target_s=0.05)
        b.compare("add  a + b", lambda: e["x"] + e["y"], lambda: r["x"] + r["y"], extra=_gbs(12))
        # Into an existing tensor: no allocation or first-touch page faults, only the kernel.
        if REFERENCE == "torch":
            add_out_ref = lambda: torch.add(r["x"], r["y"], out=r["out"])  # noqa: E731
        else:
            add_out_ref = lambda: np.add(r["x"], r["y"], out=r["out"])  # noqa: E731
        b.compare("add  add(a, b, out=c)", lambda: ember.add(e["x"], e["y"], out=e["out"]),
                  add_out_ref, extra=_gbs(12))
        b.compare("exp  a.exp()", lambda: ember.exp(e["x"]), lambda: ref_exp(r["x"]),
                  requires=("exp",))
        b.compare("broadcast  a * row + col", lambda: e["x"] * e["row"] + e["col"],
                  lambda: r["x"] * r["row"] + r["col"])
        b.compare("sum  a.sum()", lambda: e["x"].sum(), lambda: r["x"].sum(), extra=_gbs(4))
        b.compare("sum  a.sum(1) (rows)", lambda: e["x"].sum(1), lambda: r["x"].sum(1))
        b.compare("sum  a.sum(0) (columns)", lambda: e["x"].sum(0), lambda: r["x"].sum(0))
        b.compare("max  a.max(1)", lambda: e["x"].max(1), lambda: ref_max(r["x"]),
                  requires=("max",))
        results += b.results
    return results


if __name__ == "__main__":
    run()
