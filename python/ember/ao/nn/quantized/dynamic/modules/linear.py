"""The dynamically quantized Linear (``torch.ao.nn.quantized.dynamic.Linear``): qint8 weights
packed once; each call quantizes the float input to 7-bit uint8 from its own range (PyTorch's
reduce_range on x86), runs the int8 GEMM and dequantizes in its epilogue, bias included. The
result has the input's dtype."""

import ember
from ember import nn
from ember.ao.nn.quantized.modules.linear import Linear as _QuantizedLinear
from ember.ao.nn.quantized.modules.linear import LinearPackedParams

__all__ = ["Linear"]

_Q = ember._C._quantized


class Linear(_QuantizedLinear):
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        if dtype == ember.float16:  # float weights: skip the int8 packing of the base class
            nn.Module.__init__(self)
            self.in_features, self.out_features = in_features, out_features
            self._packed_params = LinearPackedParams(dtype)
            self._packed_params.set_weight_bias(ember.zeros(out_features, in_features),
                                                ember.zeros(out_features) if bias_ else None)
            self.scale, self.zero_point = 1.0, 0
        else:
            super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def forward(self, x):
        if self._packed_params.dtype == ember.float16:
            weight, bias = self._packed_params._packed_params
            return nn.functional.linear(x, weight.to(x.dtype),
                                        None if bias is None else bias.to(x.dtype))
        return _Q._linear_dynamic(x, self._packed_params._packed_params, True)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        s = (f"in_features={self.in_features}, out_features={self.out_features}, "
             f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype == ember.qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A dynamically quantized copy of a float nn.Linear: its weight quantized with the
        module's qconfig weight observer (default: per-tensor symmetric qint8)."""
        from ember.ao.quantization.qconfig import default_dynamic_qconfig
        from ember.ao.quantization.utils import quantize_weight

        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        weight_observer = qconfig.weight()
        if weight_observer.dtype == ember.float16:
            qlinear = cls(mod.in_features, mod.out_features, bias_=mod.bias is not None,
                          dtype=ember.float16)
            qlinear.set_weight_bias(mod.weight.detach().float(),
                                    mod.bias.detach() if mod.bias is not None else None)
            return qlinear
        if weight_observer.dtype != ember.qint8:
            raise TypeError(f"dynamic Linear: weight dtype {weight_observer.dtype} is not "
                            "supported; use qint8 or float16")
        weight_observer(mod.weight)
        qweight = quantize_weight(mod.weight.float(), weight_observer)
        qlinear = cls(mod.in_features, mod.out_features, bias_=mod.bias is not None)
        qlinear.set_weight_bias(qweight, mod.bias.detach() if mod.bias is not None else None)
        return qlinear
