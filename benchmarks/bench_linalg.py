"""ember.linalg against NumPy and PyTorch: the linalg issue's decompositions and solvers, plus the
matrix functions and products of ember.linalg's misc family.

Issue cases: cholesky, inv, det, solve, qr, svd, eigh, lstsq on float64 matrices of 4x4, 64x64,
512x512 and a batch of 256 matrices of 32x32, at 1 and 2 threads. Each case alternates the three
libraries (ember, torch, numpy, ember, ...) in one process, and its ratio is ember's median time
over the faster reference's. Goal: ratio <= 1.2 at every size, <= 0.8 for the batch of small
matrices. NumPy has no batched lstsq (np.linalg.lstsq takes one matrix): that case compares with
PyTorch alone. Functions not in this Ember build yet are skipped with a note.

Misc cases (no goal in the issue; same rule shown): vector_norm, matrix_exp, matrix_power,
multi_dot, vecdot, cross.

    PYTHONPATH=build/python /root/venvs/torch/bin/python benchmarks/bench_linalg.py [--quick]

Writes docs/images/linalg.png (ratio against the faster reference per case and thread count).

Three thread pools share the process (Ember's OpenMP, PyTorch's own OpenMP, NumPy's OpenBLAS). A
pool that has just finished keeps spinning for a while and steals a core from the next library,
which made 2-thread timings swing several-fold. So NumPy's OpenBLAS workers are told to sleep at
once (OPENBLAS_THREAD_TIMEOUT, read when NumPy loads it) and, with more than one thread, each
block of calls starts after a short pause in which the other pools go idle.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # 2^4 cycles of spinning; before numpy

import argparse  # noqa: E402
import ctypes  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import ember  # noqa: E402
from common import (  # noqa: E402
    Result,
    _time_calls,
    calibrate,
    environment,
    format_time,
    ratio_chart,
    torch,
)

HERE = Path(__file__).resolve().parent
ISSUE_FUNCTIONS = ["cholesky", "inv", "det", "solve", "qr", "svd", "eigh", "lstsq"]
SIZES = [("4x4", (), 4), ("64x64", (), 64), ("512x512", (), 512), ("256x32x32", (256,), 32)]
BATCHED_GOAL, GOAL = 0.8, 1.2


# ---- thread control for NumPy's OpenBLAS -------------------------------------------------------

def _openblas_setters():
    """set_num_threads entry points of the OpenBLAS libraries NumPy loaded (what threadpoolctl
    does, without the dependency)."""
    roots = {os.path.dirname(np.__file__), os.path.dirname(os.path.dirname(np.__file__))}
    paths = [p for r in roots for p in glob.glob(os.path.join(r, "numpy.libs", "*openblas*"))]
    paths += glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)),
                                    "scipy_openblas*", "lib", "*.so*"))
    setters = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                    "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                setters.append(fn)
                break
    return setters


_SETTERS = _openblas_setters()


def set_threads(n: int) -> None:
    ember.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)
    for fn in _SETTERS:
        fn(ctypes.c_int(n))


# ---- inputs and calls ------------------------------------------------------------------------

def _matrices(name: str, batch: tuple, n: int, rng):
    """NumPy float64 inputs: well-conditioned general matrices, SPD ones for cholesky / eigh."""
    a = rng.standard_normal(batch + (n, n))
    if name in ("cholesky", "eigh"):
        a = a @ np.swapaxes(a, -1, -2) / n + np.eye(n)
    else:
        a = a + n**0.5 * np.eye(n)
    args = [a]
    if name in ("solve", "lstsq"):
        args.append(rng.standard_normal(batch + (n, 1)))
    return args


def _functions(name: str, batch: tuple):
    """(ember, torch, numpy) callables taking the arguments as each library's arrays."""
    def from_module(mod):
        return getattr(mod, name, None)

    e = from_module(ember.linalg)
    t = from_module(torch.linalg) if torch is not None else None
    n = from_module(np.linalg)
    if name == "lstsq":
        n = None if batch else (lambda a, b: np.linalg.lstsq(a, b, rcond=None))
    return e, t, n


def compare3(fns, repeat: int, target_s: float, pause_s: float = 0.0):
    """Median seconds per call of each non-None function, measured round-robin; pause_s of
    sleep before each block lets the previous library's worker threads stop spinning."""
    live = [f for f in fns if f is not None]
    number = min(calibrate(f, target_s) for f in live)
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, f in enumerate(fns):
            if f is not None:
                if pause_s:
                    time.sleep(pause_s)
                times[i].append(_time_calls(f, number))
    return [statistics.median(t) if t else None for t in times]


def _pause(threads: int) -> float:
    return 0.02 if threads > 1 else 0.0


def _result(name, threads, te, tt, tn, goal):
    refs = {k: v for k, v in (("torch", tt), ("numpy", tn)) if v is not None}
    best = min(refs, key=refs.get)
    r = Result(name, threads, te, refs[best], reference=best,
               extra={"goal": goal, "torch_s": tt, "numpy_s": tn})
    ok = "ok " if r.ratio <= goal else "MISS"
    cols = "   ".join(f"{k} {format_time(v) if v is not None else '      --'}"
                      for k, v in (("torch", tt), ("numpy", tn)))
    print(f"  {name:<26} [{threads} thr]  ember {format_time(te)}   {cols}   "
          f"ratio {r.ratio:5.2f} vs {best:<5} (goal {goal}) {ok}")
    return r


def _skip(name, threads, why):
    print(f"  {name:<26} [{threads} thr]  skipped: {why}")
    return Result(name, threads, None, None, note=f"skipped: {why}")


def run_issue_cases(threads=(1, 2), repeat=11, target_s=0.05, sizes=SIZES, only=None):
    rng = np.random.default_rng(0)
    results = []
    for nthreads in threads:
        set_threads(nthreads)
        for name in ISSUE_FUNCTIONS:
            for label, batch, n in sizes:
                case = f"{name} {label}"
                if only and not any(case == o or case.startswith(o + " ") for o in only):
                    continue
                fe, ft, fn = _functions(name, batch)
                if fe is None:
                    results.append(_skip(case, nthreads, f"ember.linalg has no {name} yet"))
                    continue
                args = _matrices(name, batch, n, rng)
                ea = [ember.from_numpy(a) for a in args]
                ta = [torch.from_numpy(a) for a in args] if ft is not None else None
                te, tt, tn = compare3(
                    [lambda: fe(*ea), (lambda: ft(*ta)) if ft else None,
                     (lambda: fn(*args)) if fn else None], repeat, target_s, _pause(nthreads))
                goal = BATCHED_GOAL if batch else GOAL
                results.append(_result(case, nthreads, te, tt, tn, goal))
    return results


def run_misc_cases(threads=(1, 2), repeat=11, target_s=0.05):
    """ember.linalg's products and matrix functions (linalg_misc)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1000, 1000))
    a64 = rng.standard_normal((64, 64)) / 8
    small = rng.standard_normal((256, 8, 8)) / 3
    chain = [rng.standard_normal(s) for s in [(10, 300), (300, 20), (20, 400), (400, 5)]]
    v1, v2 = rng.standard_normal((100000, 3)), rng.standard_normal((100000, 3))
    np_only = {
        "vector_norm 1000x1000 ord=2": lambda: np.linalg.norm(x),
        "vector_norm 1000x1000 ord=3 dim=1": lambda: np.linalg.norm(x, 3, axis=1),
        "matrix_power 64x64 n=10": lambda: np.linalg.matrix_power(a64, 10),
        "multi_dot 4 matrices": lambda: np.linalg.multi_dot(chain),
        "cross 100000x3": lambda: np.cross(v1, v2),
    }
    if hasattr(np, "vecdot"):  # NumPy >= 2.0
        np_only["vecdot 100000x3"] = lambda: np.vecdot(v1, v2)

    def lib_cases(lib, conv):
        L = lib.linalg
        X, A, S, V1, V2 = conv(x), conv(a64), conv(small), conv(v1), conv(v2)
        C = [conv(c) for c in chain]
        return {
            "vector_norm 1000x1000 ord=2": lambda: L.vector_norm(X),
            "vector_norm 1000x1000 ord=3 dim=1": lambda: L.vector_norm(X, 3, dim=1),
            "matrix_exp 64x64": lambda: L.matrix_exp(A),
            "matrix_exp 256x8x8": lambda: L.matrix_exp(S),
            "matrix_power 64x64 n=10": lambda: L.matrix_power(A, 10),
            "multi_dot 4 matrices": lambda: L.multi_dot(C),
            "vecdot 100000x3": lambda: L.vecdot(V1, V2),
            "cross 100000x3": lambda: L.cross(V1, V2),
        }

    ember_cases = lib_cases(ember, ember.from_numpy)
    torch_cases = lib_cases(torch, torch.from_numpy) if torch is not None else {}
    results = []
    for nthreads in threads:
        set_threads(nthreads)
        for case, fe in ember_cases.items():
            ft, fn = torch_cases.get(case), np_only.get(case)
            if ft is None and fn is None:
                results.append(_skip(case, nthreads, "no reference installed"))
                continue
            te, tt, tn = compare3([fe, ft, fn], repeat, target_s, _pause(nthreads))
            results.append(_result(case, nthreads, te, tt, tn, GOAL))
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    p.add_argument("--chart", type=Path, default=HERE.parent / "docs" / "images" / "linalg.png")
    p.add_argument("--only", default=None,
                   help="comma-separated cases to run, e.g. 'qr,lstsq 256x32x32' (no chart)")
    p.add_argument("--threads", default="1,2", help="thread counts, e.g. 1 or 1,2")
    args = p.parse_args(argv)
    threads = tuple(int(t) for t in args.threads.split(","))
    repeat, target = (3, 0.01) if args.quick else (11, 0.05)
    print(environment())
    print(f"numpy OpenBLAS thread control: {'yes' if _SETTERS else 'no (env vars only)'}")
    print("issue cases (goal: <= 1.2x the faster of torch and numpy; <= 0.8x batched):")
    only = [o.strip() for o in args.only.split(",")] if args.only else None
    results = run_issue_cases(threads, repeat=repeat, target_s=target, only=only)
    if only:
        set_threads(1)
        return
    print("ember.linalg misc:")
    results += run_misc_cases(threads, repeat=repeat, target_s=target)
    set_threads(1)
    rows = [r.as_dict() for r in results]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"environment": environment(), "results": rows},
                                        indent=2) + "\n")
    ratio_chart(rows, args.chart, goal=GOAL, reference="the faster of torch and numpy",
                goal_of=lambda r: r["extra"].get("goal", GOAL))


if __name__ == "__main__":
    main()
