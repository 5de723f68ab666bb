"""A BERT-base encoder at inference: nn.TransformerEncoder of 12 TransformerEncoderLayer(768, 12,
3072, gelu, batch_first), eval mode, float32, under no_grad, at batch x tokens 1x128, 8x128 and
8x512 with 0, 25, 50 and 75% padding (a bool src_key_padding_mask (N, S), True = padded: each
sequence padded at its right end by a random-ish amount, deterministic, keeping at least one
token, the mean padding equal to the fraction; the 0% case passes no mask). Five contestants
on the same weights and inputs, timed alternately in one process per thread count:

    torch         PyTorch, its fastpath on (default; padded inputs go through nested tensors)
    torch_nofast  PyTorch, torch.backends.mha.set_fastpath_enabled(False)
    ort           ONNX Runtime fp32 (when onnxruntime and onnx are importable): the encoder
                  exported by torch.onnx.export (the TorchScript exporter, fastpath off), one
                  static-shape model per N x S, the mask a runtime input (all False at 0%); the
                  exporter bakes the example's sizes into the attention's Reshapes, so a model
                  exported with dynamic axes fails on any other shape
    ember         Ember, its default path (the fastpath where there is one)
    ember_nofast  Ember, ember.backends.mha.set_fastpath_enabled(False)

Each case reports the median time per call (of `--repeat` blocks of calls lasting about
`--target-s` each), the ratios of Ember's time to torch's, torch_nofast's and ort's and to
Ember's own time on the unpadded input of the same shape, Ember's GFLOP/s (real tokens only:
per layer 2 T (4 d^2 + 2 d ff) for the linears plus 4 d sum(L_i^2) for the attention, T the
real tokens and L_i each sequence's real length) and its fraction of the machine's fp32 peak
(`--peak-gflops` per core times the thread count; 117 is a Zen 4 core), and the largest
difference of each contestant's output from torch_nofast's at the non-padded positions.

    python benchmarks/bench_transformer_encoder.py [--threads 1 2] [--cases 8x128 1x128/p50]
        [--pads 0 25 50 75] [--repeat 3] [--target-s 1] [--peak-gflops 117] [--no-ort]
        [--json benchmarks/results/transformer_encoder.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback
import warnings

D_MODEL, NHEAD, FF, LAYERS = 768, 12, 3072, 12
SHAPES = ((1, 128), (8, 128), (8, 512))
PADS = (0, 25, 50, 75)  # percent of the N x S positions that are padding
CONTESTANTS = ("torch", "torch_nofast", "ort", "ember", "ember_nofast")


def case_name(n: int, s: int, pad: int) -> str:
    return f"{n}x{s}/p{pad}"


def selected_cases(cases: list[str] | None, pads: list[int]) -> list[tuple[int, int, int]]:
    """(N, S, pad percent) of every case whose name or shape ("8x128") is in `cases`."""
    out = []
    for n, s in SHAPES:
        for pad in pads:
            if cases is None or f"{n}x{s}" in cases or case_name(n, s, pad) in cases:
                out.append((n, s, pad))
    return out


def padding_lengths(n: int, s: int, pad: int) -> list[int]:
    """Padded positions per sequence: on average pad% of s (exactly, in total), each between 0
    and s - 1, spread around the mean by a seeded generator."""
    import numpy as np

    total = round(n * s * pad / 100)
    if total == 0:
        return [0] * n
    mean = total / n
    rng = np.random.default_rng(1000 * n + 10 * s + pad)
    spread = 0.8 * min(mean, s - 1 - mean)
    p = [int(round(mean + spread * u)) for u in rng.uniform(-1, 1, n)]
    p = [min(max(x, 0), s - 1) for x in p]
    i = 0
    while sum(p) != total:  # bring the total to the exact fraction, one position at a time
        step = 1 if sum(p) < total else -1
        if 0 <= p[i % n] + step <= s - 1:
            p[i % n] += step
        i += 1
    return p


def encoder_gflop(n: int, s: int, pads: list[int]) -> float:
    """FLOPs of the encoder over the real tokens only, in GFLOP."""
    lengths = [s - p for p in pads]
    tokens = sum(lengths)
    linear = 2 * tokens * (4 * D_MODEL * D_MODEL + 2 * D_MODEL * FF)
    attention = 4 * D_MODEL * sum(L * L for L in lengths)
    return LAYERS * (linear + attention) / 1e9


def export_onnx(encoder, n: int, s: int, path: str) -> None:
    """The torch encoder as an ONNX model for inputs (n, s, d) and (n, s) bool, static shapes."""
    import torch

    src = torch.randn(n, s, D_MODEL)
    mask = torch.zeros(n, s, dtype=torch.bool)
    mask[0, s // 2:] = True  # a padded example so the masked_fill stays in the graph
    prior = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)  # the fused kernels do not export
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(encoder, (src, None, mask), path, dynamo=False,
                              input_names=["src", "src_key_padding_mask"],
                              output_names=["out"], opset_version=17)
    finally:
        torch.backends.mha.set_fastpath_enabled(prior)


def child(threads: int, args) -> None:
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch

    import ember
    from common import Bench, Result, _block, _timer, environment, format_time
    from ember.utils.benchmark import Measurement, TaskSpec

    try:
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        ort = onnx = None
        ort_note = f"onnxruntime / onnx not importable ({e}): ort skipped"
    else:
        ort_note = ""
    if args.no_ort:
        ort, ort_note = None, "ort skipped (--no-ort)"
    if ort_note:
        print(f"  note: {ort_note}")

    warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
    bench = Bench(threads=threads, repeat=args.repeat, target_s=args.target_s)
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, activation="gelu",
                                               batch_first=True)
    t_enc = torch.nn.TransformerEncoder(t_layer, LAYERS).eval()
    e_layer = ember.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, activation="gelu",
                                               batch_first=True)
    e_enc = ember.nn.TransformerEncoder(e_layer, LAYERS).eval()
    state = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in t_enc.state_dict().items()}
    print(f"  ember load_state_dict: {e_enc.load_state_dict(state)}")

    def torch_call(fast, src, mask):
        torch.backends.mha.set_fastpath_enabled(fast)
        with torch.no_grad():
            return t_enc(src, src_key_padding_mask=mask)

    def ember_call(fast, src, mask):
        ember.backends.mha.set_fastpath_enabled(fast)
        with ember.no_grad():
            return e_enc(src, src_key_padding_mask=mask)

    sessions, errors = {}, {}

    def ort_session(n, s):
        if (n, s) not in sessions:
            path = os.path.join(args.onnx_dir, f"encoder_{n}x{s}.onnx")
            if not os.path.exists(path):
                export_onnx(t_enc, n, s, path)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            sessions[n, s] = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        return sessions[n, s]

    rng = np.random.default_rng(0)
    dense_s: dict[tuple[int, int], dict] = {}
    for n, s, pad in selected_cases(args.cases, args.pads):
        name = case_name(n, s, pad)
        pads = padding_lengths(n, s, pad)
        x = rng.standard_normal((n, s, D_MODEL)).astype(np.float32)
        m = np.zeros((n, s), dtype=bool)
        for i, p in enumerate(pads):
            m[i, s - p:] = p > 0
        tx, ex = torch.from_numpy(x), ember.from_numpy(x)
        tm = torch.from_numpy(m) if pad else None
        em = ember.from_numpy(m) if pad else None
        fns = {
            "torch": lambda tx=tx, tm=tm: torch_call(True, tx, tm),
            "torch_nofast": lambda tx=tx, tm=tm: torch_call(False, tx, tm),
            "ember": lambda ex=ex, em=em: ember_call(True, ex, em),
            "ember_nofast": lambda ex=ex, em=em: ember_call(False, ex, em),
        }
        if ort is not None:
            try:
                sess = ort_session(n, s)
                feed = {"src": x, "src_key_padding_mask": m}
                fns["ort"] = lambda sess=sess, feed=feed: sess.run(None, feed)[0]
            except Exception:
                errors[f"ort {n}x{s}"] = traceback.format_exc()
                print(f"  {name}: ort export / session failed:\n{errors[f'ort {n}x{s}']}")

        # The first call of each is its warm-up, its output checked and its time a first
        # estimate of how many calls a block needs.
        outputs, first_s, timers = {}, {}, {}
        for lib, fn in list(fns.items()):
            timers[lib] = _timer(fn)
            try:
                first_s[lib] = _block(_timer(lambda fn=fn, lib=lib: outputs.__setitem__(
                    lib, np.asarray(fn() if lib == "ort" else fn().numpy()))), 1)
            except Exception:
                errors[f"{lib} {name}"] = traceback.format_exc()
                print(f"  {name}: {lib} failed:\n{errors[f'{lib} {name}']}")
                del fns[lib], timers[lib]
        keep = ~m
        diffs = {lib: float(np.abs(out - outputs["torch_nofast"])[keep].max())
                 for lib, out in outputs.items() if "torch_nofast" in outputs}

        def calls_per_block(lib):
            t, number = first_s[lib], 1
            while t < args.target_s / 4:
                number *= 4
                t = _block(timers[lib], number)
            return max(1, int(number * args.target_s / t))

        number = min(calls_per_block(lib) for lib in timers)
        raw = {lib: [] for lib in timers}
        for _ in range(args.repeat):
            for lib, timer in timers.items():
                raw[lib].append(_block(timer, number))
        meas = {lib: Measurement(number_per_run=number, raw_times=times,
                                 task_spec=TaskSpec(stmt=name, setup="pass", description=lib,
                                                    num_threads=threads))
                for lib, times in raw.items()}
        bench.measurements += list(meas.values())
        sec = {lib: meas[lib].median if lib in meas else None for lib in CONTESTANTS}
        if pad == 0:
            dense_s[n, s] = sec

        def ratio(a, b):
            return a / b if a is not None and b is not None else None

        dense = dense_s.get((n, s), {})
        gflop = encoder_gflop(n, s, pads)
        peak = args.peak_gflops * threads
        rates = {lib: gflop / t for lib, t in sec.items() if t is not None}
        extra = {
            "n": n, "s": s, "pad_percent": pad, "pad_per_sequence": pads,
            "real_tokens": n * s - sum(pads), "gflop": gflop, "calls_per_block": number,
            "ms": {lib: t * 1e3 if t is not None else None for lib, t in sec.items()},
            "ratios": {
                "ember/torch": ratio(sec["ember"], sec["torch"]),
                "ember/torch_nofast": ratio(sec["ember"], sec["torch_nofast"]),
                "ember/ort": ratio(sec["ember"], sec["ort"]),
                "ember/ember_dense": ratio(sec["ember"], dense.get("ember")),
                "ember_nofast/ember_nofast_dense": ratio(sec["ember_nofast"],
                                                         dense.get("ember_nofast")),
                "torch/torch_dense": ratio(sec["torch"], dense.get("torch")),
            },
            "gflops": rates,
            "ember_peak_fraction": rates["ember"] / peak if "ember" in rates else None,
            "peak_gflops": peak,
            "max_abs_diff_vs_torch_nofast": diffs,
        }
        res = Result(name, threads, sec["ember"], sec["torch"], reference="torch", extra=extra)
        bench.results.append(res)
        times = "  ".join(f"{lib} {format_time(t).strip() if t else '-'}" for lib, t in sec.items())
        rs = "  ".join(f"{k} {v:.2f}" for k, v in extra["ratios"].items()
                       if v is not None and "nofast_dense" not in k and "torch/" not in k)
        rate = (f"ember {rates['ember']:.1f} GFLOP/s ({extra['ember_peak_fraction']:.0%} of "
                f"peak)" if "ember" in rates else "")
        diff = "  ".join(f"{k} {v:.1e}" for k, v in diffs.items() if k != "torch_nofast")
        print(f"  {name:<10} [{threads} thr]  {times}\n      {rs}  {rate}\n"
              f"      max |out - torch_nofast| at real tokens: {diff}", flush=True)
    if args.json:
        env = environment()
        if ort is not None:
            env["onnxruntime"], env["onnx"] = ort.__version__, onnx.__version__
        with open(args.json, "w") as f:
            json.dump({"threads": threads, "environment": env, "ort_note": ort_note,
                       "errors": errors, "results": [r.as_dict() for r in bench.results]},
                      f, indent=1)


def summary(rows: list[dict]) -> None:
    """A markdown table of all thread counts' results."""
    cols = ["case", "thr", *[f"{c} ms" for c in CONTESTANTS], "e/torch", "e/torch_nf", "e/ort",
            "e pad/dense", "ember GFLOP/s", "% peak", "max diff"]
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        x = r["extra"]

        def f(v, fmt):
            return format(v, fmt) if v is not None else "-"

        ratios = x["ratios"]
        diff = x["max_abs_diff_vs_torch_nofast"].get("ember")
        cells = [r["name"], str(r["threads"]), *[f(x["ms"][c], ".1f") for c in CONTESTANTS],
                 *[f(ratios[k], ".2f") for k in ("ember/torch", "ember/torch_nofast",
                                                 "ember/ort", "ember/ember_dense")],
                 f(x["gflops"].get("ember"), ".1f"),
                 f(x["ember_peak_fraction"] and 100 * x["ember_peak_fraction"], ".0f"),
                 f(diff, ".1e")]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--cases", nargs="+", default=None,
                   help="shapes (8x128) or cases (8x128/p50); default all")
    p.add_argument("--pads", type=int, nargs="+", default=list(PADS), help="percent padding")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--target-s", type=float, default=1.0, help="seconds per timed block")
    p.add_argument("--peak-gflops", type=float, default=117.0, help="fp32 peak of one core")
    p.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out")
    p.add_argument("--json", default=None, help="write all thread counts' results here")
    p.add_argument("--child", type=int, default=0)
    p.add_argument("--onnx-dir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args)
        return
    rows, merged = [], {"threads": args.threads, "runs": []}
    with tempfile.TemporaryDirectory(prefix="bench_transformer_encoder_") as tmp:
        for t in args.threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
            out = os.path.join(tmp, f"results.{t}.json")
            cmd = [sys.executable, __file__, "--child", str(t), "--json", out, "--onnx-dir", tmp,
                   "--repeat", str(args.repeat), "--target-s", str(args.target_s),
                   "--peak-gflops", str(args.peak_gflops), "--pads", *map(str, args.pads)]
            if args.cases:
                cmd += ["--cases", *args.cases]
            if args.no_ort:
                cmd.append("--no-ort")
            print(f"{t} thread{'s' if t > 1 else ''}:", flush=True)
            subprocess.run(cmd, env=env, check=True)
            with open(out) as f:
                run = json.load(f)
            merged["runs"].append(run)
            rows += run["results"]
    summary(rows)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(merged, f, indent=1)
        print(f"\nresults: {args.json}")


if __name__ == "__main__":
    main()
