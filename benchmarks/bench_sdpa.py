"""scaled_dot_product_attention alone: Ember's fused CPU kernel against PyTorch's (its CPU flash
kernel), 12 heads x 64, L = S in (512, 2048, 4096), forward and forward + backward, plain and
causal, 1 and 2 threads (issue 14's goal: at most 0.8x PyTorch's time at 2048 and 4096, with
memory that grows as O(L)). Peak memory is measured per library in a fresh subprocess: the
growth of the peak resident set during its first forward, inputs already in place and the
peak reset just before the call. The output
itself is 12 MiB at L = 4096; PyTorch keeps earlier allocations cached, so both figures are
lower bounds.

    python benchmarks/bench_sdpa.py [--threads 1 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HEADS, DIM = 12, 64
LENGTHS = (512, 2048, 4096)


def peak_growth_mib(lib: str, L: int) -> float:
    """Peak RSS growth of one forward at length L in a fresh process, in MiB. The kernel's
    high-water mark (VmHWM) is reset just before the call (writing 5 to /proc/self/clear_refs),
    so what importing the library peaked at earlier does not hide the call's own peak."""
    code = f"""
import numpy as np
a = [np.random.default_rng(i).standard_normal((1, {HEADS}, {L}, {DIM}), dtype=np.float32)
     for i in range(3)]
if "{lib}" == "ember":
    import ember, ember.nn.functional as F
    t = [ember.from_numpy(x) for x in a]
else:
    import torch, torch.nn.functional as F
    t = [torch.from_numpy(x) for x in a]

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
base = status_kib("VmRSS")
F.scaled_dot_product_attention(*t)
print((status_kib("VmHWM") - base) / 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def child(threads: int, out_path: str | None) -> None:
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import torch.nn.functional as TF

    import ember
    import ember.nn.functional as EF
    from common import Bench, environment

    bench = Bench(threads=threads, repeat=5, target_s=0.2)
    rng = np.random.default_rng(0)
    for L in LENGTHS:
        arrays = [rng.standard_normal((1, HEADS, L, DIM)).astype(np.float32) for _ in range(3)]
        grad = rng.standard_normal((1, HEADS, L, DIM)).astype(np.float32)
        e = [ember.from_numpy(a) for a in arrays]
        t = [torch.from_numpy(a) for a in arrays]
        flops = 4 * L * L * DIM * HEADS

        def rate(te, tr, flops=flops):
            return {"ember GFLOP/s": flops / te / 1e9, "torch GFLOP/s": flops / tr / 1e9}

        bench.compare(f"sdpa fwd L={L}", lambda e=e: EF.scaled_dot_product_attention(*e),
                      lambda t=t: TF.scaled_dot_product_attention(*t), extra=rate)
        bench.compare(f"sdpa fwd causal L={L}",
                      lambda e=e: EF.scaled_dot_product_attention(*e, is_causal=True),
                      lambda t=t: TF.scaled_dot_product_attention(*t, is_causal=True))
        eg = [x.clone().requires_grad_() for x in e]
        tg = [x.clone().requires_grad_() for x in t]
        ge, gt = ember.from_numpy(grad), torch.from_numpy(grad)
        bench.compare(f"sdpa fwd+bwd L={L}",
                      lambda: EF.scaled_dot_product_attention(*eg).backward(ge),
                      lambda: TF.scaled_dot_product_attention(*tg).backward(gt))
    memory = {}
    if threads == 1:
        for L in LENGTHS:
            memory[L] = {lib: peak_growth_mib(lib, L) for lib in ("ember", "torch")}
            print(f"  peak memory growth of one forward at L={L}: ember "
                  f"{memory[L]['ember']:.1f} MiB, torch {memory[L]['torch']:.1f} MiB "
                  f"(the L x S scores of all heads would be {HEADS * L * L * 4 / 2**20:.0f} MiB)")
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "memory_mib": memory,
                       "results": [r.as_dict() for r in bench.results]}, f, indent=1)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--json", default=None, help="write results (.<threads>.json appended)")
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        child(args.child, args.json)
        return
    for t in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
        cmd = [sys.executable, __file__, "--child", str(t)]
        if args.json:
            cmd += ["--json", f"{args.json}.{t}.json"]
        subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    main()
