"""Ember vs PyTorch at one CPU capability level: the vector-math unary ops, the fused rows
(softmax, layer_norm, cross_entropy on transformer shapes), fp32 GEMM against the machine's peak,
and bf16 GEMM against fp32. Each thread count runs in a fresh subprocess.

    python benchmarks/bench_cpu_levels.py                      # the machine's best level
    python benchmarks/bench_cpu_levels.py --level avx2         # both libraries forced to AVX2
    python benchmarks/bench_cpu_levels.py --peak-gflops 180 --json out.json

--level sets EMBER_CPU_CAPABILITY for Ember and, for PyTorch, what an AVX2-only CPU would give it:
ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA and MKL_ENABLE_INSTRUCTIONS. Both libraries then run the
kernels they would run on a CPU of that level. Goals (issue 13): unary ops at most 1.0x PyTorch's
time (0.7x for exp, tanh, sigmoid, gelu), fused rows at most 0.8x, fp32 GEMM at most 1.0x and at
least 85% of the level's peak from 1024 up, bf16 GEMM at least 1.7x fp32 throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

UNARY = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
    "erfinv", "sigmoid", "logsigmoid", "softplus", "gelu", "gelu_tanh", "silu", "mish", "pow",
    "sqrt", "rsqrt",
]  # fmt: skip

LEVEL_ENV = {
    # Ember's level, and what PyTorch's three dispatchers would pick on a CPU of that level.
    "default": {"EMBER_CPU_CAPABILITY": "default", "ATEN_CPU_CAPABILITY": "default",
                "ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    "avx2": {"EMBER_CPU_CAPABILITY": "avx2", "ATEN_CPU_CAPABILITY": "avx2",
             "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "avx512": {"EMBER_CPU_CAPABILITY": "avx512", "ATEN_CPU_CAPABILITY": "avx512",
               "ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
}  # fmt: skip


def unary_cases(mod, F, x, pos, unit):
    """name -> callable for library `mod` (ember or torch) on float32 inputs."""
    cases = {}
    for name in UNARY:
        if name in ("log", "log2", "log10", "sqrt", "rsqrt"):
            arg = pos
        elif name in ("asin", "acos", "atanh", "erfinv"):
            arg = unit
        elif name == "acosh":
            arg = pos + 1
        else:
            arg = x
        if name == "atan2":
            cases[name] = lambda a=arg: mod.atan2(a, pos)
        elif name == "pow":
            cases[name] = lambda: mod.pow(pos, x)
        elif name == "logsigmoid":
            cases[name] = lambda: F.logsigmoid(x)
        elif name == "softplus":
            cases[name] = lambda: F.softplus(x)
        elif name == "gelu":
            cases[name] = lambda: F.gelu(x)
        elif name == "gelu_tanh":
            cases[name] = lambda: F.gelu(x, approximate="tanh")
        elif name == "silu":
            cases[name] = lambda: F.silu(x)
        elif name == "mish":
            cases[name] = lambda: F.mish(x)
        else:
            cases[name] = lambda f=getattr(mod, name), a=arg: f(a)
    return cases


def row_cases(mod, F, rows_np):
    cases = {}
    for label, arr in rows_np.items():
        t = mod.from_numpy(arr)
        n = arr.shape[-1]
        w = mod.ones(n)
        b = mod.zeros(n)
        target = mod.from_numpy((arr[:, 0] * 0).astype("int64") + 3)
        cases[f"softmax {label}"] = lambda t=t: mod.softmax(t, -1)
        cases[f"log_softmax {label}"] = lambda t=t: mod.log_softmax(t, -1)
        cases[f"layer_norm {label}"] = lambda t=t, n=n, w=w, b=b: F.layer_norm(t, (n,), w, b)
        cases[f"cross_entropy {label}"] = lambda t=t, y=target: F.cross_entropy(t, y)
    return cases


def child(threads: int, peak: float | None, out_path: str | None) -> None:
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import torch.nn.functional as TF

    import ember
    import ember.nn.functional as EF
    from common import Bench, environment
    from ember.utils.benchmark import Timer

    rng = np.random.default_rng(0)
    n = 4_000_000
    x_np = rng.standard_normal(n).astype(np.float32)
    pos_np = (rng.random(n) * 10 + 0.01).astype(np.float32)
    unit_np = (rng.random(n) * 1.98 - 0.99).astype(np.float32)
    arrays = [x_np, pos_np, unit_np]
    e_in = [ember.from_numpy(a) for a in arrays]
    t_in = [torch.from_numpy(a) for a in arrays]
    level = ember.backends.cpu.get_cpu_capability()
    print(
        f"== {threads} thread(s), Ember level {level}, torch "
        f"{torch.backends.cpu.get_cpu_capability()}",
        flush=True,
    )
    bench = Bench(threads=threads, repeat=9, target_s=0.05)
    e_cases = unary_cases(ember, EF, *e_in)
    t_cases = unary_cases(torch, TF, *t_in)
    for name in UNARY:
        bench.compare(f"{name} 4e6 f32", e_cases[name], t_cases[name])

    rows_np = {
        "8x128x768": rng.standard_normal((8 * 128, 768)).astype(np.float32),
        "96x128x128": rng.standard_normal((96 * 128, 128)).astype(np.float32),
    }
    e_rows = row_cases(ember, EF, rows_np)
    t_rows = row_cases(torch, TF, rows_np)
    for name in e_rows:
        bench.compare(name, e_rows[name], t_rows[name])

    gemm = {}
    for size in (256, 512, 1024, 2048, 4096):
        a = rng.standard_normal((size, size)).astype(np.float32)
        ea, ta = ember.from_numpy(a), torch.from_numpy(a)
        flops = 2 * size**3

        def rate(te, tr, flops=flops):
            out = {"ember GFLOP/s": flops / te / 1e9, "torch GFLOP/s": flops / tr / 1e9}
            if peak:
                out["% of peak"] = 100 * flops / te / 1e9 / peak
            return out

        r = bench.compare(
            f"matmul f32 {size}", lambda ea=ea: ea @ ea, lambda ta=ta: ta @ ta, extra=rate
        )
        gemm[("f32", size)] = r
        if size in (1024, 2048) and level == "AVX512_VNNI_BF16":
            eb, tb = ea.to(ember.bfloat16), ta.to(torch.bfloat16)
            r16 = bench.compare(
                f"matmul bf16 {size}", lambda eb=eb: eb @ eb, lambda tb=tb: tb @ tb, extra=rate
            )
            gemm[("bf16", size)] = r16
            if r is not None and r16 is not None:
                print(
                    f"  bf16 / f32 throughput at {size}: "
                    f"ember {r.ember_s / r16.ember_s:.2f}x, torch {r.ref_s / r16.ref_s:.2f}x"
                )
        elif size in (1024, 2048):
            # No bf16 dot product at this level: PyTorch's bf16 GEMM then runs at about
            # 1 GFLOP/s (minutes per case), so only Ember's (converted to float32) is timed.
            eb = ea.to(ember.bfloat16)
            timer = Timer("eb @ eb", globals={"eb": eb}, num_threads=threads)
            t16 = timer.blocked_autorange(min_run_time=1.0).median
            print(
                f"  matmul bf16 {size}  [{threads} thr]  ember {t16 * 1e3:.2f} ms "
                f"({flops / t16 / 1e9:.1f} GFLOP/s, {r.ember_s / t16:.2f}x the f32 throughput; "
                "PyTorch not timed)"
            )
    if out_path:
        payload = {
            "level": level,
            "threads": threads,
            "peak_gflops": peak,
            "environment": environment(),
            "results": [r.as_dict() for r in bench.results],
        }
        with open(out_path, "w") as f:
            json.dump(payload, f, indent=1)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--level", choices=sorted(LEVEL_ENV), default=None)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument(
        "--peak-gflops",
        type=float,
        default=None,
        help="fp32 peak of the level for the thread count (machine-limits)",
    )
    p.add_argument(
        "--json",
        default=None,
        help="write results to JSON (one file per thread count: .1.json / .2.json appended)",
    )
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        child(args.child, args.peak_gflops, args.json)
        return
    for t in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
        if args.level:
            env.update(LEVEL_ENV[args.level])
        cmd = [sys.executable, __file__, "--child", str(t)]
        if args.peak_gflops:
            cmd += ["--peak-gflops", str(args.peak_gflops * t)]
        if args.json:
            cmd += ["--json", f"{args.json}.{t}.json"]
        subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    main()
