"""int8_report: which layers of a converted model compute in int8, which in float, and why.

Ember's quantized layers are never slower than float: at packing, each convolution picks the
int8 GEMM, the direct int8 depthwise kernel or the float convolution of its dequantized operands
(requantized after), by thresholds measured on the int8 kernels against float
(docs/design/quantization.md). Linear layers always run the int8 GEMM, which is faster than
float at every measured shape. Layers convert() left in float are listed too."""

from __future__ import annotations

from ember import nn

__all__ = ["int8_report"]

_QUANTIZABLE_FLOAT = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Embedding, nn.EmbeddingBag, nn.LSTM,
                      nn.GRU, nn.MultiheadAttention)


def int8_report(model):
    """A list of {"module", "type", "compute", "reason"} for every layer that does a GEMM-like
    product: "int8" (with the kernel) or "float" (with why)."""
    import ember.ao.nn.quantized as nnq
    import ember.ao.nn.quantized.dynamic as nnqd

    rows = []
    for name, m in model.named_modules():
        entry = None
        if isinstance(m, nnq.modules.conv._ConvNd):
            kernel = m._packed_params.kernel
            entry = ("float" if kernel == "float" else "int8", m._packed_params.reason)
        elif isinstance(m, (nnq.Linear, nnqd.Linear)):
            entry = ("int8", "int8 GEMM")
        elif isinstance(m, nnq.Embedding):
            entry = ("int8", f"{m._packed_params._packed_weight.bit_rate}-bit rows, "
                     "dequantized by the lookup")
        elif isinstance(m, (nnqd.LSTM, nnqd.GRU, nnqd.MultiheadAttention)):
            entry = ("int8", "int8 GEMMs for the projections")
        elif type(m) in _QUANTIZABLE_FLOAT and not name.endswith("out_proj"):
            entry = ("float", "not converted (no qconfig, or its type is not mapped)")
        if entry:
            rows.append({"module": name or "(model)", "type": type(m).__name__,
                         "compute": entry[0], "reason": entry[1]})
    return rows
