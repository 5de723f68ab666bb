"""Eager-mode numeric suite (``torch.ao.ns._numeric_suite``): compare a float model with its
quantized version weight by weight and layer output by layer output, to find which layer loses
accuracy."""

from __future__ import annotations

import math

import ember
from ember import nn

__all__ = ["OutputLogger", "compare_model_outputs", "compare_weights", "compute_sqnr",
           "get_matching_activations"]

_QUANTIZED_SUFFIX = "._packed_params._packed_params"


def compare_weights(float_dict, quantized_dict):
    """{key: {"float": float weight, "quantized": quantized weight}} for every weight of
    ``quantized_dict`` (a quantized model's state_dict) that has a float counterpart in
    ``float_dict``: ``layer.weight`` pairs with ``layer.weight``, and a packed linear's
    ``layer._packed_params._packed_params`` with ``layer.weight``."""
    out = {}
    for key, value in quantized_dict.items():
        if key.endswith(_QUANTIZED_SUFFIX):
            float_key = key[: -len(_QUANTIZED_SUFFIX)] + ".weight"
            value = value[0]
        elif key.endswith(".weight"):
            float_key = key
        else:
            continue
        if float_key in float_dict:
            out[key] = {"float": float_dict[float_key], "quantized": value}
    return out


class OutputLogger(nn.Module):
    """Records every output of the module it is attached to (``stats["tensor_val"]``)."""

    def __init__(self):
        super().__init__()
        self.stats = {"tensor_val": []}

    def forward(self, x):
        self.stats["tensor_val"].append(x)
        return x


def _default_allow_list():
    import ember.ao.nn.intrinsic as nni
    import ember.ao.nn.quantized as nnq
    import ember.ao.nn.quantized.dynamic as nnqd

    return {nn.Linear, nn.ReLU, nn.ReLU6, nn.Conv2d, nn.MultiheadAttention, nnq.Linear,
            nnq.ReLU, nnq.ReLU6, nnqd.Linear, nnqd.MultiheadAttention, nni.LinearReLU,
            nni.ConvReLU2d, nnq.Quantize}


def _attach(model, names, logger_cls):
    loggers, handles = {}, []
    modules = dict(model.named_modules())
    for name in names:
        logger = logger_cls()
        loggers[name] = logger

        def hook(module, inputs, output, logger=logger):
            logger(output[0] if isinstance(output, tuple) else output)

        handles.append(modules[name].register_forward_hook(hook))
    return loggers, handles


def compare_model_outputs(float_model, q_model, *data, logger_cls=OutputLogger,
                          allow_list=None):
    """Runs both models on ``data`` and returns {name: {"float": [outputs], "quantized":
    [outputs]}} for every submodule name present in both whose type is in ``allow_list``
    (default: the float and quantized layer types)."""
    allow = _default_allow_list() if allow_list is None else set(allow_list)
    q_modules = dict(q_model.named_modules())
    names = [name for name, m in float_model.named_modules()
             if name and name in q_modules and (type(m) in allow or type(q_modules[name]) in allow)]
    float_loggers, float_handles = _attach(float_model, names, logger_cls)
    q_loggers, q_handles = _attach(q_model, names, logger_cls)
    try:
        with ember.no_grad():
            float_model(*data)
            q_model(*data)
    finally:
        for h in float_handles + q_handles:
            h.remove()
    return {name: {"float": float_loggers[name].stats["tensor_val"],
                   "quantized": q_loggers[name].stats["tensor_val"]} for name in names}


def get_matching_activations(float_module, q_module):
    """{name: {"float": ..., "quantized": ...}} from OutputLoggers attached under the same
    names in both models."""
    float_loggers = {n: m for n, m in float_module.named_modules() if isinstance(m, OutputLogger)}
    q_loggers = {n: m for n, m in q_module.named_modules() if isinstance(m, OutputLogger)}
    return {n: {"float": float_loggers[n].stats["tensor_val"],
                "quantized": q_loggers[n].stats["tensor_val"]}
            for n in float_loggers if n in q_loggers}


def compute_sqnr(x, y):
    """Signal-to-quantization-noise ratio of y against the reference x, in dB (quantized
    tensors are dequantized first): 20 log10(||x|| / ||x - y||); inf when they are equal."""
    x = x.dequantize() if x.is_quantized else x
    y = y.dequantize() if y.is_quantized else y
    signal = ember.linalg.vector_norm(x.float()).item()
    noise = ember.linalg.vector_norm(x.float() - y.float()).item()
    return math.inf if noise == 0 else 20 * math.log10(signal / noise)
