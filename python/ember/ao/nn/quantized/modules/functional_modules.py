"""Arithmetic as modules, so that eager-mode quantization can observe and quantize it
(``torch.ao.nn.quantized.FloatFunctional`` / ``QFunctional``). Write ``self.skip_add.add(a, b)``
instead of ``a + b`` in a model; prepare() observes the result, convert() swaps the
FloatFunctional for a QFunctional holding the observed output scale and zero point."""

import ember
from ember import nn

__all__ = ["FXFloatFunctional", "FloatFunctional", "QFunctional"]

_Q = ember._C._quantized


class FloatFunctional(nn.Module):
    """Float add, mul, cat, add_relu, matmul and their scalar forms, each result passed through
    ``activation_post_process`` (an Identity until prepare() puts an observer there)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use "
                           "the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(ember.add(x, y))

    def add_scalar(self, x, y):
        # Not observed: the quantized op derives its output parameters from the input's.
        return ember.add(x, y)

    def mul(self, x, y):
        return self.activation_post_process(ember.mul(x, y))

    def mul_scalar(self, x, y):
        return ember.mul(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(ember.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(nn.functional.relu(ember.add(x, y)))

    def matmul(self, x, y):
        return self.activation_post_process(ember.matmul(x, y))


class FXFloatFunctional(FloatFunctional):
    """FloatFunctional without the observer slot (FX graph mode observes the calls itself)."""

    def __init__(self):
        nn.Module.__init__(self)

    def add(self, x, y):
        return ember.add(x, y)

    def mul(self, x, y):
        return ember.mul(x, y)

    def cat(self, x, dim=0):
        return ember.cat(x, dim=dim)

    def add_relu(self, x, y):
        return nn.functional.relu(ember.add(x, y))

    def matmul(self, x, y):
        return ember.matmul(x, y)


def _per_tensor(x, who):
    if not isinstance(x, ember.Tensor) or not x.is_quantized:
        raise TypeError(f"QFunctional.{who}: expected quantized tensors, got "
                        f"{getattr(x, 'dtype', type(x).__name__)}: quantize the inputs first "
                        "(a QuantStub), or keep a FloatFunctional for float ones")
    if x.qscheme() != ember.per_tensor_affine:
        raise TypeError(f"QFunctional.{who}: expected per-tensor quantized tensors, got "
                        f"{x.qscheme()}")
    return x


class QFunctional(nn.Module):
    """The quantized FloatFunctional: each op dequantizes its inputs, computes in float and
    requantizes once with this module's ``scale`` and ``zero_point`` (what PyTorch's quantized
    add/mul/cat give, to one rounding)."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = nn.Identity()

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the "
                           "underlying operation")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def _requant(self, real, like):
        return ember.quantize_per_tensor(real, float(self.scale), int(self.zero_point),
                                         like.dtype)

    def _binary(self, op, x, y):
        _per_tensor(x, op)
        _per_tensor(y, op)
        if x.dtype == ember.quint8 and y.dtype == ember.quint8:  # the int8 kernel
            return getattr(_Q, op)(x, y, float(self.scale), int(self.zero_point))
        real = x.dequantize() * y.dequantize() if op == "mul" else \
            x.dequantize() + y.dequantize()
        return self._requant(nn.functional.relu(real) if op == "add_relu" else real, x)

    def add(self, x, y):
        return self._binary("add", x, y)

    def add_relu(self, x, y):
        return self._binary("add_relu", x, y)

    def mul(self, x, y):
        return self._binary("mul", x, y)

    def matmul(self, x, y):
        r = ember.matmul(_per_tensor(x, "matmul").dequantize(),
                         _per_tensor(y, "matmul").dequantize())
        return self._requant(r, x)

    def cat(self, x, dim=0):
        parts = [_per_tensor(t, "cat").dequantize() for t in x]
        return self._requant(ember.cat(parts, dim=dim), x[0])

    def add_scalar(self, x, c):
        """x + c with x's scale; the zero point moves by c / scale when it stays in range
        (exact), else the parameters are chosen from the result's range."""
        _per_tensor(x, "add_scalar")
        scale, zp = x.q_scale(), x.q_zero_point()
        info = ember.iinfo(x.int_repr().dtype)
        shifted = zp - round(float(c) / scale)
        real = x.dequantize() + float(c)
        if info.min <= shifted <= info.max:
            return ember.quantize_per_tensor(real, scale, shifted, x.dtype)
        return ember.quantize_per_tensor_dynamic(real, x.dtype, False)

    def mul_scalar(self, x, c):
        """x * c: the integers kept, the scale multiplied by |c| (c < 0 mirrors the values)."""
        _per_tensor(x, "mul_scalar")
        c = float(c)
        if c == 0.0:
            return ember.quantize_per_tensor(ember.zeros_like(x.dequantize()), x.q_scale(),
                                             x.q_zero_point(), x.dtype)
        if c > 0:
            return ember._make_per_tensor_quantized_tensor(x.int_repr(), x.q_scale() * c,
                                                           x.q_zero_point())
        real = x.dequantize() * c
        return ember.quantize_per_tensor(real, x.q_scale() * -c, x.q_zero_point(), x.dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not FloatFunctional:
            raise TypeError("QFunctional.from_float expects a FloatFunctional")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = QFunctional()
        new_mod.scale = float(scale)
        new_mod.zero_point = int(zero_point)
        return new_mod
