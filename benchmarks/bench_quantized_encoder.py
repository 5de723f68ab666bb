"""A dynamically quantized BERT-base encoder (issue 15): nn.TransformerEncoder of 12
TransformerEncoderLayer(768, 12, 3072, gelu, batch_first), eval, no_grad, at 1x128 and 8x128
tokens with 0% and 50% padding (the padding of bench_transformer_encoder.py), against

    ember_float  Ember's float encoder on its fastpath
    ember_int8   quantize_dynamic(encoder, {nn.Linear, nn.MultiheadAttention}): every GEMM int8,
                 still on the fused fastpath (packed real tokens when padded)
    ort_int8     ONNX Runtime: PyTorch's float encoder exported (TorchScript exporter, fastpath
                 off), then onnxruntime.quantization.quantize_dynamic (QInt8 weights)
    torch_int8   PyTorch's quantize_dynamic of its encoder ({nn.Linear}: PyTorch has no dynamic
                 attention), when it runs; its error is recorded when it does not

timed alternately in one process (median of `--repeat` blocks), 1 and 2 threads. Reports the
speed-up of Ember int8 over Ember float (goal >= 1.8x on VNNI machines, 1.3x on AVX2-only ones)
and its ratio to ONNX Runtime int8 (goal < 1), and the largest difference of each int8 output
from the float one at the real tokens.

    python benchmarks/bench_quantized_encoder.py [--threads 1 2] [--repeat 3]
        [--json benchmarks/results/quantized_encoder.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

CASES = ((1, 128, 0), (1, 128, 50), (8, 128, 0), (8, 128, 50))


def timed(fn, pause_s):
    if pause_s:
        time.sleep(pause_s)
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def child(threads, repeat, out_path):
    import numpy as np
    import torch

    import ember
    from ember.ao.quantization import quantize_dynamic

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_transformer_encoder import D_MODEL, FF, LAYERS, NHEAD, export_onnx, padding_lengths
    from common import environment

    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    t_enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, activation="gelu",
                                         batch_first=True), LAYERS).eval()
    e_enc = ember.nn.TransformerEncoder(
        ember.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, activation="gelu",
                                         batch_first=True), LAYERS).eval()
    e_enc.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t_enc.state_dict().items()})
    e_q = quantize_dynamic(e_enc, {ember.nn.Linear, ember.nn.MultiheadAttention})
    t_q = torch.ao.quantization.quantize_dynamic(t_enc, {torch.nn.Linear}, dtype=torch.qint8)
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType
        from onnxruntime.quantization import quantize_dynamic as ort_quantize
    except ImportError:
        ort = None
    tmp = tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    results, errors = [], {}
    for n, s, pad in CASES:
        pads = padding_lengths(n, s, pad)
        x = rng.standard_normal((n, s, D_MODEL)).astype(np.float32)
        m = np.zeros((n, s), dtype=bool)
        for i, p in enumerate(pads):
            m[i, s - p:] = p > 0
        ex, em = ember.from_numpy(x), ember.from_numpy(m) if pad else None
        tx, tm = torch.from_numpy(x), torch.from_numpy(m) if pad else None

        def run_ember(model, ex=ex, em=em):
            with ember.no_grad():
                return model(ex, src_key_padding_mask=em).numpy()

        fns = {"ember_float": lambda: run_ember(e_enc), "ember_int8": lambda: run_ember(e_q)}

        def run_torch(tx=tx, tm=tm):
            with torch.no_grad():
                return t_q(tx, src_key_padding_mask=tm).numpy()

        try:
            run_torch()
            fns["torch_int8"] = run_torch
        except Exception as e:  # PyTorch 2.15: "'function' object has no attribute 'device'"
            errors[f"torch_int8 {n}x{s}"] = f"{type(e).__name__}: {e}"
        if ort is not None:
            path = os.path.join(tmp, f"enc_{n}x{s}.onnx")
            qpath = path.replace(".onnx", ".int8.onnx")
            if not os.path.exists(qpath):
                export_onnx(t_enc, n, s, path)
                ort_quantize(path, qpath, weight_type=QuantType.QInt8)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            sess = ort.InferenceSession(qpath, opts, providers=["CPUExecutionProvider"])
            fns["ort_int8"] = lambda sess=sess, x=x, m=m: sess.run(
                None, {"src": x, "src_key_padding_mask": m})[0]
        outputs = {name: fn() for name, fn in fns.items()}  # warm-up, and the outputs
        times = {name: [] for name in fns}
        for _ in range(repeat):
            for name, fn in fns.items():
                times[name].append(timed(fn, 0.05 if threads > 1 else 0))
        med = {name: statistics.median(v) for name, v in times.items()}
        keep = ~m
        diffs = {name: float(np.abs(out - outputs["ember_float"])[keep].max())
                 for name, out in outputs.items() if name != "ember_float"}
        row = {
            "name": f"{n}x{s}/p{pad}", "threads": threads,
            "ms": {k: v * 1e3 for k, v in med.items()},
            "speedup_int8_vs_ember_float": med["ember_float"] / med["ember_int8"],
            "ratio_vs_ort_int8": med["ember_int8"] / med["ort_int8"] if "ort_int8" in med else None,
            "ratio_vs_torch_int8": (med["ember_int8"] / med["torch_int8"]
                                    if "torch_int8" in med else None),
            "max_abs_diff_vs_ember_float": diffs,
        }
        results.append(row)
        extra = "".join(f"  {k} {v * 1e3:8.1f} ms" for k, v in med.items()
                        if k not in ("ember_float", "ember_int8"))
        print(f"  {row['name']:10s} [{threads} thr] float {med['ember_float'] * 1e3:8.1f} ms  "
              f"int8 {med['ember_int8'] * 1e3:8.1f} ms  speed-up "
              f"{row['speedup_int8_vs_ember_float']:.2f}{extra}"
              + (f"  x{row['ratio_vs_ort_int8']:.2f} ort" if row["ratio_vs_ort_int8"] else "")
              + f"  diffs {({k: round(v, 3) for k, v in diffs.items()})}", flush=True)
    for k, v in errors.items():
        print(f"  {k} failed: {v}")
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "results": results,
                       "errors": errors}, f, indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", default=None, help="write results (.<threads>.json appended)")
    p.add_argument("--child", type=int, default=0)
    args = p.parse_args()
    if args.child:
        try:
            child(args.child, args.repeat, args.json)
        except Exception:
            traceback.print_exc()
            raise
        return
    for t in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
        cmd = [sys.executable, __file__, "--child", str(t), "--repeat", str(args.repeat)]
        if args.json:
            cmd += ["--json", f"{args.json}.{t}.json"]
        subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    main()
