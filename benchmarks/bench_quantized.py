"""Dynamic int8 quantization (issue 15): nn.quantized.dynamic.Linear at BERT-base widths
(768->768, 768->3072, 3072->768) and batch 1, 32 and 128, against

    ember_float   Ember's float nn.Linear on the same weights
    torch_int8    PyTorch's quantize_dynamic Linear (its fbgemm/x86 engine)
    torch_float   PyTorch's float nn.Linear
    ort_int8      ONNX Runtime's dynamic quantization of the exported Linear (MatMulInteger),
                  when onnxruntime and onnx are importable

timed alternately in one process (median of `--repeat` blocks of about `--target-s` each), at 1
and 2 threads. Reports each contestant's time, Ember int8's speed-up over Ember float, its ratio
to PyTorch int8 and ONNX Runtime int8, its int8 GOP/s and fraction of the machine's int8 peak
(`--peak-gops` per core times threads; 454 is a Zen 4 core's vpdpbusd rate), the largest
difference from PyTorch's int8 output, and the size of the quantized model's file (ember.save)
against the float one's.

    python benchmarks/bench_quantized.py [--threads 1 2] [--repeat 5] [--target-s 0.2]
        [--peak-gops 454] [--json benchmarks/results/quantized.json]

Several thread pools share the process (Ember's and PyTorch's OpenMP, ONNX Runtime's own, NumPy's
OpenBLAS). A pool that has just finished keeps spinning and steals a core from the next
contestant, so ONNX Runtime is told not to spin, OpenBLAS to sleep at once, and with more than
one thread each block starts after a short pause in which the other pools go idle.

Goals (issue 15): at batch >= 32 at least 2x Ember float on VNNI machines (1.4x on AVX2-only),
never slower than float at batch 1, at most 0.8x PyTorch's int8 time; size at most 0.27x float.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy loads OpenBLAS

SHAPES = ((768, 768), (768, 3072), (3072, 768))
BATCHES = (1, 32, 128)




def ort_session(torch, layer, k, batch, tmp):
    """An ONNX Runtime session running the dynamically quantized export of `layer`."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = os.path.join(tmp, f"linear_{k}_{layer.out_features}_{batch}.onnx")
    qpath = path.replace(".onnx", ".int8.onnx")
    torch.onnx.export(layer, (torch.zeros(batch, k),), path, input_names=["x"],
                      output_names=["y"], dynamo=False)
    quantize_dynamic(path, qpath, weight_type=QuantType.QInt8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(qpath, opts, providers=["CPUExecutionProvider"])


def child(threads, repeat, target_s, peak_gops, out_path):
    import numpy as np
    import torch

    import ember
    import ember.nn.functional as EF
    from ember.ao.quantization import quantize_dynamic

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment, timed_block

    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    try:
        import onnxruntime  # noqa: F401
        have_ort = True
    except ImportError:
        have_ort = False
    rng = np.random.default_rng(0)
    results, sizes = [], {}
    tmp = tempfile.mkdtemp()
    for k, n in SHAPES:
        w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        tl = torch.nn.Linear(k, n)
        with torch.no_grad():
            tl.weight.copy_(torch.from_numpy(w))
            tl.bias.copy_(torch.from_numpy(b))
        tq = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(tl), {torch.nn.Linear},
                                                    dtype=torch.qint8)
        el = ember.nn.Linear(k, n)
        el.weight.data = ember.from_numpy(w.copy())
        el.bias.data = ember.from_numpy(b.copy())
        eq = quantize_dynamic(ember.nn.Sequential(el))
        ew, eb = el.weight.detach(), el.bias.detach()
        float_file, int8_file = io.BytesIO(), io.BytesIO()
        ember.save(ember.nn.Sequential(el).state_dict(), float_file)
        ember.save(eq.state_dict(), int8_file)
        sizes[f"{k}->{n}"] = {"float_bytes": float_file.tell(), "int8_bytes": int8_file.tell(),
                              "ratio": int8_file.tell() / float_file.tell()}
        for batch in BATCHES:
            x = rng.standard_normal((batch, k)).astype(np.float32)
            ex, tx = ember.from_numpy(x), torch.from_numpy(x)
            fns = {
                "ember_int8": lambda: eq(ex),
                "ember_float": lambda: EF.linear(ex, ew, eb),
                "torch_int8": lambda: tq(tx),
                "torch_float": lambda: tl(tx),
            }
            if have_ort:
                sess = ort_session(torch, tl, k, batch, tmp)
                fns["ort_int8"] = lambda sess=sess, x=x: sess.run(None, {"x": x})
            times = {name: [] for name in fns}
            with torch.no_grad():
                for _ in range(repeat):  # alternate the contestants
                    for name, fn in fns.items():
                        times[name].append(timed_block(fn, target_s, 0.05 if threads > 1 else 0))
                want = tq(tx).numpy()
            med = {name: statistics.median(v) for name, v in times.items()}
            diff = float(np.abs(eq(ex).numpy() - want).max())
            gops = 2 * batch * k * n / med["ember_int8"] / 1e9
            row = {
                "name": f"dynamic Linear {k}->{n} batch {batch}",
                "threads": threads,
                "ms": {name: t * 1e3 for name, t in med.items()},
                "speedup_vs_ember_float": med["ember_float"] / med["ember_int8"],
                "ratio_vs_torch_int8": med["ember_int8"] / med["torch_int8"],
                "ratio_vs_ort_int8": (med["ember_int8"] / med["ort_int8"]) if have_ort else None,
                "ember_int8_gops": gops,
                "int8_peak_fraction": gops / (peak_gops * threads),
                "max_abs_diff_vs_torch_int8": diff,
            }
            results.append(row)
            ort_txt = (f" ort {med['ort_int8'] * 1e3:7.3f} ms (x{row['ratio_vs_ort_int8']:.2f})"
                       if have_ort else "")
            print(f"  {row['name']:36s} [{threads} thr] int8 {med['ember_int8'] * 1e3:7.3f} ms"
                  f"  float {med['ember_float'] * 1e3:7.3f} ms (speed-up "
                  f"{row['speedup_vs_ember_float']:.2f})  torch int8 "
                  f"{med['torch_int8'] * 1e3:7.3f} ms (x{row['ratio_vs_torch_int8']:.2f})"
                  f"{ort_txt}  {gops:6.1f} GOP/s ({row['int8_peak_fraction']:.0%})  "
                  f"diff {diff:.1e}", flush=True)
    for name, s in sizes.items():
        print(f"  file size {name}: int8 {s['int8_bytes']} B / float {s['float_bytes']} B = "
              f"{s['ratio']:.3f}")
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "results": results,
                       "file_sizes": sizes}, f, indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--target-s", type=float, default=0.2)
    p.add_argument("--peak-gops", type=float, default=454.0)
    p.add_argument("--json", default=None, help="write results (.<threads>.json appended)")
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        child(args.child, args.repeat, args.target_s, args.peak_gops, args.json)
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import run_per_thread_count

    child_args = ["--repeat", str(args.repeat), "--target-s", str(args.target_s),
                  "--peak-gops", str(args.peak_gops)]
    run_per_thread_count(__file__, args.threads, child_args, args.json)


if __name__ == "__main__":
    main()
