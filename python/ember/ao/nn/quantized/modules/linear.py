"""The statically quantized Linear and its packed weights (``torch.ao.nn.quantized.Linear`` and
``LinearPackedParams``), with PyTorch's state_dict layout: ``scale``, ``zero_point``,
``_packed_params.dtype`` and ``_packed_params._packed_params`` = (qint8 weight, float bias)."""

import ember
from ember import nn

__all__ = ["Linear", "LinearPackedParams"]

_Q = ember._C._quantized


def _empty_qweight(out_features, in_features):
    ints = ember.zeros((out_features, in_features), dtype=ember.int8)
    return ember._make_per_tensor_quantized_tensor(ints, 1.0, 0)


class LinearPackedParams(nn.Module):
    """Holds the int8 weight and the bias packed for the int8 GEMM of the CPU level in use."""

    _version = 3

    def __init__(self, dtype=ember.qint8):
        super().__init__()
        if dtype not in (ember.qint8, ember.float16):
            raise TypeError(f"LinearPackedParams: unsupported dtype {dtype}: the dynamic "
                            "linears take qint8 or float16 weights")
        self.dtype = dtype
        if dtype == ember.float16:
            self.set_weight_bias(ember.zeros(1, 1), None)
        else:
            self.set_weight_bias(_empty_qweight(1, 1), None)

    def set_weight_bias(self, weight, bias):
        if bias is not None and bias.dtype != ember.float32:
            bias = bias.float()
        if self.dtype == ember.float16:
            # float16 weights (quantize_dynamic(dtype=float16)): rounded to float16, kept as
            # float32 for the float GEMM, as PyTorch's fp16 packing computes in float32.
            self._packed_params = (weight.detach().to(ember.float16).float(),
                                   None if bias is None else bias.detach())
        else:
            self._packed_params = _Q.linear_prepack(weight, bias)
        self.__dict__.pop("_parts", None)  # row blocks packed from the old weight

    def _weight_bias(self):
        if self.dtype == ember.float16:
            return self._packed_params
        return self._packed_params.unpack_quantized()

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = ember.qint8
        elif prefix + "dtype" in state_dict:
            self.dtype = state_dict.pop(prefix + "dtype")
        if version is None or version < 3:
            if prefix + "weight" in state_dict:
                self.set_weight_bias(state_dict.pop(prefix + "weight"),
                                     state_dict.pop(prefix + "bias", None))
        if prefix + "_packed_params" in state_dict:
            weight, bias = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return self._weight_bias().__repr__()


class Linear(nn.Module):
    """y = requant(x @ dequant(W)^T + b): a quint8 input, a qint8 weight (per tensor or per
    output channel), a quint8 output with this module's ``scale`` and ``zero_point``."""

    _version = 3
    _FLOAT_MODULE = (nn.Linear,)

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = ember.zeros(out_features) if bias_ else None
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(_empty_qweight(out_features, in_features), bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scale={self.scale}, zero_point={self.zero_point}, "
                f"qscheme={self.weight().qscheme()}")

    def __repr__(self):
        # As PyTorch: the packed parameters are not shown as a child module.
        lines = [f"{self._get_name()}({self.extra_repr()})"]
        return "\n".join(lines)

    def forward(self, x):
        return _Q.linear(x, self._packed_params._packed_params, float(self.scale),
                         int(self.zero_point))

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if prefix + "scale" in state_dict:
            self.scale = float(state_dict.pop(prefix + "scale"))
        if prefix + "zero_point" in state_dict:
            self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A statically quantized copy of a float nn.Linear that went through prepare() and
        calibration (its weight observer from the qconfig, its output observer attached)."""
        from ember.ao.quantization.utils import quantize_weight

        if not hasattr(mod, "qconfig") or mod.qconfig is None:
            raise RuntimeError("Linear.from_float: the float module has no qconfig: run "
                               "ember.ao.quantization.prepare() on the model first")
        activation_post_process = getattr(mod, "activation_post_process", None)
        if activation_post_process is None:
            raise RuntimeError("Linear.from_float: the float module has no output observer "
                               "(activation_post_process): run prepare() and calibrate first")
        weight_observer = getattr(mod, "weight_fake_quant", None)
        if weight_observer is None:  # a float module; a QAT one observed its weight in training
            weight_observer = mod.qconfig.weight()
            weight_observer(mod.weight)
        qweight = quantize_weight(mod.weight.detach().float(), weight_observer)
        scale, zero_point = activation_post_process.calculate_qparams()
        qlinear = cls(mod.in_features, mod.out_features, mod.bias is not None)
        qlinear.set_weight_bias(qweight, mod.bias.detach() if mod.bias is not None else None)
        qlinear.scale = float(scale)
        qlinear.zero_point = int(zero_point)
        return qlinear
