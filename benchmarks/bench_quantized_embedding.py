"""Weight-only quantized EmbeddingBag (issue 15): a 200,000 x 64 table, 512 bags of 40 indices
(sum), 8-bit and 4-bit rows, against

    ember_float   Ember's float nn.EmbeddingBag on the same table
    torch_int8 / torch_int4   PyTorch's nn.quantized.EmbeddingBag (its fbgemm kernels)
    torch_float   PyTorch's float nn.EmbeddingBag

timed alternately in one process (median of `--repeat` blocks), at 1 and 2 threads; reports the
times, the speed-ups, the state_dict sizes against float, and the largest difference from
PyTorch's quantized output on the same quantized table.

    python benchmarks/bench_quantized_embedding.py [--threads 1 2] [--repeat 5]
        [--json benchmarks/results/quantized_embedding]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

ROWS, DIM, BAGS, PER_BAG = 200_000, 64, 512, 40


def child(threads, repeat, target_s, out_path):
    import numpy as np
    import torch

    import ember
    from ember.ao import quantization as tq

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment, timed_block

    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    idx = rng.integers(0, ROWS, BAGS * PER_BAG)
    offsets = np.arange(0, BAGS * PER_BAG, PER_BAG)
    e_float = ember.nn.EmbeddingBag(ROWS, DIM, mode="sum")
    e_float.weight.data = ember.from_numpy(table.copy())
    t_float = torch.nn.EmbeddingBag(ROWS, DIM, mode="sum")
    with torch.no_grad():
        t_float.weight.copy_(torch.from_numpy(table))
    ei, eo = ember.from_numpy(idx), ember.from_numpy(offsets)
    ti, to = torch.from_numpy(idx), torch.from_numpy(offsets)
    results, sizes = [], {}

    def size(sd):
        buf = io.BytesIO()
        ember.save(sd, buf)
        return buf.tell()

    float_size = size(e_float.state_dict())
    for bits, e_cfg, t_dtype in ((8, tq.float_qparams_weight_only_qconfig, torch.quint8),
                                 (4, tq.float_qparams_weight_only_qconfig_4bit, torch.quint4x2)):
        eq = tq.quantize_dynamic(ember.nn.Sequential(e_float), {ember.nn.EmbeddingBag: e_cfg})[0]
        t_obs = torch.ao.quantization.PerChannelMinMaxObserver(
            ch_axis=0, dtype=t_dtype, qscheme=torch.per_channel_affine_float_qparams)
        t_obs(torch.from_numpy(table))
        s, z = t_obs.calculate_qparams()
        tweight = torch.quantize_per_channel(torch.from_numpy(table), s, z, 0, t_dtype)
        tq_bag = torch.ao.nn.quantized.EmbeddingBag(ROWS, DIM, mode="sum", dtype=t_dtype)
        tq_bag.set_weight(tweight)
        fns = {"ember_q": lambda: eq(ei, eo), "ember_float": lambda: e_float(ei, eo),
               "torch_q": lambda: tq_bag(ti, to), "torch_float": lambda: t_float(ti, to)}
        times = {name: [] for name in fns}
        with torch.no_grad(), ember.no_grad():
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s))
            diff = float(np.abs(eq(ei, eo).numpy() - tq_bag(ti, to).numpy()).max())
        med = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        sizes[f"{bits}-bit"] = size(eq.state_dict()) / float_size
        row = {"name": f"EmbeddingBag {bits}-bit {ROWS}x{DIM}, {BAGS} bags of {PER_BAG}",
               "threads": threads, "ms": med,
               "speedup_vs_ember_float": med["ember_float"] / med["ember_q"],
               "ratio_vs_torch_quantized": med["ember_q"] / med["torch_q"],
               "max_abs_diff_vs_torch_quantized": diff, "size_vs_float": sizes[f"{bits}-bit"]}
        results.append(row)
        print(f"  {row['name']:48s} [{threads} thr] ember {med['ember_q']:.3f} ms  float "
              f"{med['ember_float']:.3f} ms (x{row['speedup_vs_ember_float']:.2f})  torch q "
              f"{med['torch_q']:.3f} ms (x{row['ratio_vs_torch_quantized']:.2f})  torch float "
              f"{med['torch_float']:.3f} ms  size {row['size_vs_float']:.3f}  diff {diff:.1e}",
              flush=True)
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "results": results},
                      f, indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--target-s", type=float, default=0.2)
    p.add_argument("--json", default=None, help="write results (.<threads>.json appended)")
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        child(args.child, args.repeat, args.target_s, args.json)
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import run_per_thread_count

    child_args = ["--repeat", str(args.repeat), "--target-s", str(args.target_s)]
    run_per_thread_count(__file__, args.threads, child_args, args.json)


if __name__ == "__main__":
    main()
