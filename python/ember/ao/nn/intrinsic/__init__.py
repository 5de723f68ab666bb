"""Fused float modules that quantize as one (``torch.ao.nn.intrinsic``): what fuse_modules
produces. Each is a Sequential of the float modules it fuses, so it computes exactly what they
did; prepare_qat or convert() swaps it for its QAT or quantized counterpart."""

from ember import nn

__all__ = ["BNReLU2d", "BNReLU3d", "ConvBn1d", "ConvBn2d", "ConvBnReLU1d", "ConvBnReLU2d",
           "ConvReLU1d", "ConvReLU2d", "LinearBn1d", "LinearReLU"]


class _FusedModule(nn.Sequential):
    """Checks the exact types of the modules it fuses (a subclass may compute something else,
    which the fused counterparts would not reproduce)."""

    _TYPES = ()

    def __init__(self, *modules):
        types = tuple(type(m) for m in modules)
        expected = tuple(t if isinstance(t, type) else None for t in self._TYPES)
        if types != expected:
            got = ", ".join(t.__name__ for t in types)
            want = ", ".join(t.__name__ if t is not None else "(missing from ember.nn)"
                             for t in expected)
            raise AssertionError(f"Incorrect types for input modules {got}: expected {want}")
        super().__init__(*modules)


class LinearReLU(_FusedModule):
    """Linear followed by ReLU; quantizes to nn.intrinsic.quantized.LinearReLU, whose int8
    GEMM applies the ReLU in its epilogue."""

    _TYPES = (nn.Linear, nn.ReLU)

    def __init__(self, linear, relu):
        super().__init__(linear, relu)


class _ConvReLUNd(_FusedModule):
    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvReLU1d(_ConvReLUNd):
    """Conv1d (with any batch norm already folded into it) followed by ReLU."""

    _TYPES = (nn.Conv1d, nn.ReLU)


class ConvReLU2d(_ConvReLUNd):
    """Conv2d (with any batch norm already folded into it) followed by ReLU; quantizes to
    nn.intrinsic.quantized.ConvReLU2d, whose int8 GEMM applies the ReLU in its epilogue."""

    _TYPES = (nn.Conv2d, nn.ReLU)


class _ConvBnNd(_FusedModule):
    def __init__(self, conv, bn):
        super().__init__(conv, bn)


class ConvBn1d(_ConvBnNd):
    """Conv1d followed by a trainable BatchNorm1d, from fuse_modules_qat: prepare_qat makes it
    nn.intrinsic.qat.ConvBn1d, which folds the batch norm only at convert()."""

    _TYPES = (nn.Conv1d, nn.BatchNorm1d)


class ConvBn2d(_ConvBnNd):
    """Conv2d followed by a trainable BatchNorm2d, from fuse_modules_qat: prepare_qat makes it
    nn.intrinsic.qat.ConvBn2d, which folds the batch norm only at convert()."""

    _TYPES = (nn.Conv2d, nn.BatchNorm2d)


class _ConvBnReLUNd(_FusedModule):
    def __init__(self, conv, bn, relu):
        super().__init__(conv, bn, relu)


class ConvBnReLU1d(_ConvBnReLUNd):
    """Conv1d, BatchNorm1d and ReLU, from fuse_modules_qat (QAT: nn.intrinsic.qat.ConvBnReLU1d,
    then nn.intrinsic.quantized.ConvReLU1d)."""

    _TYPES = (nn.Conv1d, nn.BatchNorm1d, nn.ReLU)


class ConvBnReLU2d(_ConvBnReLUNd):
    """Conv2d, BatchNorm2d and ReLU, from fuse_modules_qat (QAT: nn.intrinsic.qat.ConvBnReLU2d,
    then nn.intrinsic.quantized.ConvReLU2d)."""

    _TYPES = (nn.Conv2d, nn.BatchNorm2d, nn.ReLU)


class LinearBn1d(_FusedModule):
    """Linear followed by a trainable BatchNorm1d, from fuse_modules_qat (QAT:
    nn.intrinsic.qat.LinearBn1d, then a quantized Linear with the batch norm folded in)."""

    _TYPES = (nn.Linear, nn.BatchNorm1d)

    def __init__(self, linear, bn):
        super().__init__(linear, bn)


class _BNReLUNd(_FusedModule):
    def __init__(self, batch_norm, relu):
        super().__init__(batch_norm, relu)


class BNReLU2d(_BNReLUNd):
    """BatchNorm2d followed by ReLU (a batch norm with no convolution before it to fold into);
    quantizes to nn.intrinsic.quantized.BNReLU2d."""

    _TYPES = (nn.BatchNorm2d, nn.ReLU)


class BNReLU3d(_BNReLUNd):
    """BatchNorm3d followed by ReLU; quantizes to nn.intrinsic.quantized.BNReLU3d. (Ember's nn
    has no BatchNorm3d yet: until it does, this cannot be built from float modules.)"""

    _TYPES = (getattr(nn, "BatchNorm3d", None), nn.ReLU)


from . import qat, quantized  # noqa: E402,F401  (after the fused modules: they map from them)
