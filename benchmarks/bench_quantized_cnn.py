"""Static int8 quantization of a small CNN (issue 15): a CIFAR-shaped residual network (32x32
RGB input; stem conv 3->32 + BN + ReLU, max pool, two residual blocks of 3x3 convs with a
FloatFunctional add, a stride-2 conv 64->128, global average pool, Linear 128->10) or, with
--model mobile, a MobileNetV2-shaped one (96x96 input, depthwise-separable inverted residuals;
see build_mobile), fused, calibrated and converted with get_default_qconfig('x86'), at batch 1
and 32, against

    ember_float   the same Ember model before quantization
    torch_int8    PyTorch's eager-mode static quantization of the same network and weights
                  (its x86 engine)
    torch_float   PyTorch's float model
    ort_int8      ONNX Runtime running the statically quantized ONNX export of the float
                  PyTorch model (QDQ, per-channel weights, the same calibration inputs), when
                  onnxruntime is installed

timed alternately in one process (median of `--repeat` blocks of about `--target-s` each), at 1
and 2 threads. Reports the times, Ember int8's speed-up over Ember float, its ratio to PyTorch
int8, the share of test inputs whose arg-max class Ember int8 and PyTorch int8 agree on, Ember
int8's largest difference from Ember float's logits, and the state_dict file sizes.

    python benchmarks/bench_quantized_cnn.py [--threads 1 2] [--repeat 5] [--target-s 0.2]
        [--json benchmarks/results/quantized_cnn] [--model residual|mobile] [--shapes]

With --shapes it times single convolution layers instead (stems, grouped and depthwise ones,
1x1, batch 1 and 8): the int8 route Ember's packing picks ("auto": the int8 GEMM, or a direct
depthwise / grouped / stem kernel), the int8 GEMM forced ("gemm"), the float convolution of the
dequantized operands, requantized ("float"), and the float convolution alone ("float_conv"):
the measurements behind the packing's choice; then transposed convolutions (decoder
upsampling), int8 against float. Inputs are channels-last, as the previous
quantized layer hands them over, except the stems' (3 channels), which take a QuantStub's
NCHW output. All are 7-bit (0-127), as the x86 qconfig's reduce_range calibration makes
activations.

Goal (issue 15): at least 2x Ember float on VNNI machines.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

BATCHES = (1, 32)




def build(lib, quant):
    """The network in `lib` (ember or torch); `quant` is lib.ao.quantization."""
    nn = lib.nn
    fq = lib.ao.nn.quantized

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)
            self.skip = fq.FloatFunctional()

        def forward(self, x):
            y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
            return self.skip.add_relu(x, y)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = quant.QuantStub()
            self.stem = nn.Conv2d(3, 64, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.block1 = Block(64)
            self.down = nn.Conv2d(64, 128, 3, stride=2, padding=1, bias=False)
            self.bn_down = nn.BatchNorm2d(128)
            self.relu_down = nn.ReLU()
            self.block2 = Block(128)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(128, 10)
            self.dequant = quant.DeQuantStub()

        def forward(self, x):
            x = self.pool(self.relu(self.bn(self.stem(self.quant(x)))))
            x = self.block2(self.relu_down(self.bn_down(self.down(self.block1(x)))))
            return self.dequant(self.fc(lib.flatten(self.gap(x), 1)))

    return Net()


FUSE = [["stem", "bn", "relu"], ["down", "bn_down", "relu_down"],
        ["block1.conv1", "block1.bn1", "block1.relu1"], ["block1.conv2", "block1.bn2"],
        ["block2.conv1", "block2.bn1", "block2.relu1"], ["block2.conv2", "block2.bn2"]]


# MobileNetV2-style inverted residuals: (input, expansion, output, stride) per block.
MOBILE_BLOCKS = ((32, 1, 16, 1), (16, 6, 24, 2), (24, 6, 24, 1), (24, 6, 32, 2), (32, 6, 32, 1))


def build_mobile(lib, quant):
    """A MobileNetV2-shaped network on 96x96 RGB input in `lib`: stem conv 3->32 stride 2,
    inverted residual blocks (1x1 expansion, 3x3 depthwise, 1x1 projection, a FloatFunctional
    add where shapes allow), 1x1 conv 32->128, global average pool, Linear 128->10. ReLU in place
    of ReLU6, as PyTorch's quantizable MobileNetV2."""
    nn = lib.nn
    fq = lib.ao.nn.quantized

    def conv_bn(cin, cout, k, stride=1, groups=1, relu=True):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        return nn.Sequential(*(layers + [nn.ReLU()] if relu else layers))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, t, cout, stride):
            super().__init__()
            hidden = cin * t
            layers = [conv_bn(cin, hidden, 1)] if t != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, hidden),
                       conv_bn(hidden, cout, 1, relu=False)]
            self.conv = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout
            if self.residual:
                self.skip = fq.FloatFunctional()

        def forward(self, x):
            y = self.conv(x)
            return self.skip.add(x, y) if self.residual else y

    class Mobile(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = quant.QuantStub()
            self.stem = conv_bn(3, 32, 3, 2)
            self.blocks = nn.Sequential(*(InvertedResidual(*b) for b in MOBILE_BLOCKS))
            self.head = conv_bn(32, 128, 1)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(128, 10)
            self.dequant = quant.DeQuantStub()

        def forward(self, x):
            x = self.head(self.blocks(self.stem(self.quant(x))))
            return self.dequant(self.fc(lib.flatten(self.gap(x), 1)))

    return Mobile()


def mobile_fuse_list(net):
    """[conv, bn(, relu)] name lists of every conv_bn Sequential of build_mobile's network."""
    groups = []
    for name, m in net.named_modules():
        kids = [k for k, _ in m.named_children()]
        if kids and kids[:2] == ["0", "1"] and type(m).__name__ == "Sequential" and \
                type(getattr(m, "0")).__name__ == "Conv2d":
            groups.append([f"{name}.{k}" for k in kids])
    return groups


MODELS = {"residual": (build, lambda net: FUSE, (3, 32, 32), "static CNN"),
          "mobile": (build_mobile, mobile_fuse_list, (3, 96, 96), "mobile CNN")}


def ort_static_session(torch, tnet, input_shape, calib, batch, tmp):
    """An ONNX Runtime session running the statically quantized (QDQ, per-channel weights,
    calibrated on `calib`) ONNX export of the float network `tnet`, or None without
    onnxruntime."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import (
            CalibrationDataReader,
            QuantFormat,
            QuantType,
            quantize_static,
        )
    except ImportError:
        return None

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": calib[i:i + 8]} for i in range(0, len(calib), 8)])

        def get_next(self):
            return next(self.batches, None)

    path = os.path.join(tmp, f"cnn_{batch}.onnx")
    qpath = path.replace(".onnx", ".int8.onnx")
    torch.onnx.export(tnet, (torch.zeros(batch, *input_shape),), path, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}},
                      dynamo=False)
    quantize_static(path, qpath, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(qpath, opts, providers=["CPUExecutionProvider"])


def child(threads, repeat, target_s, out_path, model="residual"):
    import numpy as np
    import torch

    import ember

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment, timed_block

    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    torch.backends.quantized.engine = "x86"
    torch.manual_seed(0)
    build_net, fuse_list, input_shape, title = MODELS[model]
    tnet = build_net(torch, torch.ao.quantization).eval()
    with torch.no_grad():  # non-trivial batch norm statistics
        for m in tnet.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    enet = build_net(ember, ember.ao.quantization).eval()
    enet.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                          for k, v in tnet.state_dict().items()})
    rng = np.random.default_rng(0)
    calib = rng.standard_normal((64, *input_shape)).astype(np.float32)
    tnet.qconfig = torch.ao.quantization.get_default_qconfig("x86")
    fuse = fuse_list(tnet)
    tq = torch.ao.quantization.prepare(torch.ao.quantization.fuse_modules(tnet, fuse))
    enet.qconfig = ember.ao.quantization.get_default_qconfig("x86")
    eq = ember.ao.quantization.prepare(ember.ao.quantization.fuse_modules(enet, fuse))
    with torch.no_grad(), ember.no_grad():
        tq(torch.from_numpy(calib))
        eq(ember.from_numpy(calib))
    tq = torch.ao.quantization.convert(tq)
    eq = ember.ao.quantization.convert(eq)
    sizes = {}
    for name, sd in (("float", enet.state_dict()), ("int8", eq.state_dict())):
        buf = io.BytesIO()
        ember.save(sd, buf)
        sizes[name] = buf.tell()
    sizes["ratio"] = sizes["int8"] / sizes["float"]
    test = rng.standard_normal((256, *input_shape)).astype(np.float32)
    with torch.no_grad(), ember.no_grad():
        e_int8 = eq(ember.from_numpy(test)).numpy()
        e_float = enet(ember.from_numpy(test)).numpy()
        t_int8 = tq(torch.from_numpy(test)).numpy()
    agree = float((e_int8.argmax(1) == t_int8.argmax(1)).mean())
    agree_float = float((e_int8.argmax(1) == e_float.argmax(1)).mean())
    results = []
    ort = ort_static_session(torch, tnet, input_shape, calib, 1, tempfile.mkdtemp())
    for batch in BATCHES:
        x = test[:batch]
        ex, tx = ember.from_numpy(x), torch.from_numpy(x)
        fns = {"ember_int8": lambda: eq(ex), "ember_float": lambda: enet(ex),
               "torch_int8": lambda: tq(tx), "torch_float": lambda: tnet(tx)}
        if ort is not None:
            fns["ort_int8"] = lambda: ort.run(None, {"x": x})
        times = {name: [] for name in fns}
        with torch.no_grad(), ember.no_grad():
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s, 0.05 if threads > 1 else 0))
        med = {name: statistics.median(v) for name, v in times.items()}
        row = {"name": f"{title} batch {batch}", "threads": threads,
               "ms": {name: t * 1e3 for name, t in med.items()},
               "speedup_vs_ember_float": med["ember_float"] / med["ember_int8"],
               "ratio_vs_torch_int8": med["ember_int8"] / med["torch_int8"],
               "ratio_vs_ort_int8": med["ember_int8"] / med["ort_int8"] if ort else None,
               "argmax_agreement_vs_torch_int8": agree,
               "argmax_agreement_vs_ember_float": agree_float,
               "max_abs_diff_vs_ember_float": float(np.abs(e_int8 - e_float).max())}
        results.append(row)
        print(f"  {row['name']:22s} [{threads} thr] int8 {med['ember_int8'] * 1e3:7.3f} ms  "
              f"float {med['ember_float'] * 1e3:7.3f} ms (speed-up "
              f"{row['speedup_vs_ember_float']:.2f})  torch int8 {med['torch_int8'] * 1e3:7.3f}"
              f" ms (x{row['ratio_vs_torch_int8']:.2f})"
              + (f"  ORT int8 {med['ort_int8'] * 1e3:7.3f} ms (x{row['ratio_vs_ort_int8']:.2f})"
                 if ort else "")
              + "  torch float "
              f"{med['torch_float'] * 1e3:7.3f} ms  arg-max agreement: torch int8 {agree:.3f},"
              f" float {agree_float:.3f}", flush=True)
    print(f"  state_dict size: int8 {sizes['int8']} B / float {sizes['float']} B = "
          f"{sizes['ratio']:.3f}")
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"threads": threads, "environment": environment(), "results": results,
                       "file_sizes": sizes}, f, indent=1)


SHAPES = (  # N, C, H, W, C_out, kernel, stride, padding, groups
    (8, 64, 28, 28, 64, 3, 1, 1, 1), (8, 64, 28, 28, 64, 3, 1, 1, 4),
    (8, 64, 28, 28, 64, 3, 1, 1, 16), (8, 128, 28, 28, 128, 3, 1, 1, 32),
    (8, 64, 28, 28, 64, 3, 1, 1, 64), (8, 32, 56, 56, 32, 3, 1, 1, 32),
    (8, 144, 56, 56, 144, 3, 2, 1, 144), (8, 3, 112, 112, 32, 3, 2, 1, 1),
    (8, 3, 224, 224, 64, 7, 2, 3, 1), (8, 16, 56, 56, 16, 1, 1, 0, 1),
    (8, 16, 56, 56, 16, 3, 1, 1, 1), (1, 64, 7, 7, 64, 3, 1, 1, 1),
    (1, 32, 14, 14, 32, 3, 1, 1, 32), (1, 96, 28, 28, 96, 3, 1, 1, 96),
    (1, 3, 224, 224, 32, 3, 2, 1, 1))


TRANSPOSED_SHAPES = (  # N, C_in, H = W, C_out, kernel, stride, padding, output_padding
    (8, 64, 28, 32, 4, 2, 1, 0), (8, 128, 14, 64, 4, 2, 1, 0), (8, 32, 56, 16, 3, 2, 1, 1),
    (1, 256, 7, 128, 4, 2, 1, 0))


def shapes_child(threads, repeat, target_s, out_path):
    import ember

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment, timed_block

    ember.set_num_threads(threads)
    q_ops = ember._C._quantized
    results = []
    for n, c, h, w, o, k, s, p, g in SHAPES:
        x = ember.randn(n, c, h, w)
        if c <= 4:  # a stem: a QuantStub's NCHW output, 7-bit as x86's reduce_range makes it
            qx = ember.quantize_per_tensor(x.clamp(-3.2, 3.15), 0.05, 64, ember.quint8)
        else:  # channels-last, as the previous quantized layer hands it over
            qx = ember.quantize_per_tensor(x.permute(0, 2, 3, 1).contiguous(), 0.05, 0,
                                           ember.quint8).permute(0, 3, 1, 2)
        qw = ember.quantize_per_channel(ember.randn(o, c // g, k, k),
                                        ember.full((o,), 0.01, dtype=ember.float64),
                                        ember.zeros(o, dtype=ember.int64), 0, ember.qint8)
        fns, kinds = {}, {}
        for route in ("auto", "gemm", "float"):
            packed = q_ops.conv_prepack(qw, ember.zeros(o), [s, s], [p, p], [1, 1], g, route)
            kinds[route] = packed.kernel
            fns[route] = (lambda packed=packed: q_ops.conv(qx, packed, 0.02, 0, True))
        fx, fw = ember.randn(n, c, h, w), ember.randn(o, c // g, k, k)
        fns["float_conv"] = lambda: ember.nn.functional.conv2d(fx, fw, None, s, p, 1, g)
        times = {name: [] for name in fns}
        with ember.no_grad():
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s))
        med = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        row = {"name": f"N{n} C{c} {h}x{w} -> {o}, k{k} s{s} g{g}", "threads": threads,
               "ms": med, "auto_kernel": kinds["auto"],
               "auto_speedup_vs_float_conv": med["float_conv"] / med["auto"]}
        results.append(row)
        print(f"  {row['name']:34s} [{threads} thr] auto ({kinds['auto']}) {med['auto']:.3f} ms"
              f"  GEMM {med['gemm']:.3f}  float route {med['float']:.3f}  float conv"
              f" {med['float_conv']:.3f} ms  (x{row['auto_speedup_vs_float_conv']:.2f})",
              flush=True)
    for n, c, h, o, k, s, p, op in TRANSPOSED_SHAPES:  # int8 GEMM + col2im against float
        qx = ember.quantize_per_tensor(ember.randn(n, h, h, c), 0.05, 0,
                                       ember.quint8).permute(0, 3, 1, 2)
        qw = ember.quantize_per_tensor(ember.randn(c, o, k, k) * 0.1, 0.01, 0, ember.qint8)
        packed = q_ops.conv_transpose_prepack(qw, ember.zeros(o), [s, s], [p, p], [op, op],
                                              [1, 1], 1)
        fx, fw = ember.randn(n, c, h, h), ember.randn(c, o, k, k)
        fns = {"auto": lambda packed=packed, qx=qx: q_ops.conv_transpose(qx, packed, 0.02, 0),
               "float_conv": lambda fx=fx, fw=fw, s=s, p=p, op=op:
               ember.nn.functional.conv_transpose2d(fx, fw, None, s, p, op)}
        times = {name: [] for name in fns}
        with ember.no_grad():
            for _ in range(repeat):
                for name, fn in fns.items():
                    times[name].append(timed_block(fn, target_s))
        med = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        row = {"name": f"N{n} C{c} {h}x{h} -> {o}, transposed k{k} s{s}", "threads": threads,
               "ms": med, "auto_kernel": packed.kernel,
               "auto_speedup_vs_float_conv": med["float_conv"] / med["auto"]}
        results.append(row)
        print(f"  {row['name']:34s} [{threads} thr] int8 {med['auto']:.3f} ms  float conv "
              f"{med['float_conv']:.3f} ms  (x{row['auto_speedup_vs_float_conv']:.2f})",
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
    p.add_argument("--shapes", action="store_true", help="time single layers (see above)")
    p.add_argument("--model", choices=sorted(MODELS), default="residual")
    args = p.parse_args()
    if args.child:
        if args.shapes:
            shapes_child(args.child, args.repeat, args.target_s, args.json)
        else:
            child(args.child, args.repeat, args.target_s, args.json, args.model)
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import run_per_thread_count

    child_args = ["--repeat", str(args.repeat), "--target-s", str(args.target_s)]
    child_args += ["--shapes"] if args.shapes else ["--model", args.model]
    run_per_thread_count(__file__, args.threads, child_args, args.json)


if __name__ == "__main__":
    main()
