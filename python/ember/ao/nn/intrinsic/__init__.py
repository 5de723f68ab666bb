"""Fused float modules that quantize as one (``torch.ao.nn.intrinsic``): what fuse_modules
produces."""

from ember import nn

from . import qat, quantized  # noqa: F401

__all__ = ["ConvReLU1d", "ConvReLU2d", "LinearReLU"]


class _FusedModule(nn.Sequential):
    pass


class LinearReLU(_FusedModule):
    """Linear followed by ReLU; quantizes to nn.intrinsic.quantized.LinearReLU, whose int8
    GEMM applies the ReLU in its epilogue."""

    def __init__(self, linear, relu):
        if type(linear) is not nn.Linear or type(relu) is not nn.ReLU:
            raise AssertionError(f"Incorrect types for input modules {type(linear).__name__}, "
                                 f"{type(relu).__name__}: expected Linear and ReLU")
        super().__init__(linear, relu)


class _ConvReLUNd(_FusedModule):
    _CONV = None

    def __init__(self, conv, relu):
        if type(conv) is not self._CONV or type(relu) is not nn.ReLU:
            raise AssertionError(f"Incorrect types for input modules {type(conv).__name__}, "
                                 f"{type(relu).__name__}: expected {self._CONV.__name__} and "
                                 "ReLU")
        super().__init__(conv, relu)


class ConvReLU1d(_ConvReLUNd):
    """Conv1d (with any batch norm already folded into it) followed by ReLU."""

    _CONV = nn.Conv1d


class ConvReLU2d(_ConvReLUNd):
    """Conv2d (with any batch norm already folded into it) followed by ReLU; quantizes to
    nn.intrinsic.quantized.ConvReLU2d, whose int8 GEMM applies the ReLU in its epilogue."""

    _CONV = nn.Conv2d
