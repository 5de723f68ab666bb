"""Zero, constant, reflection, replication and circular padding layers in 1-D, 2-D and 3-D
(``torch.nn.modules.padding``): F.pad with a fixed padding and mode.

``padding`` is an int (the same on every side) or a tuple in F.pad's order, last dim first:
(left, right), then (top, bottom), then (front, back). As in PyTorch a tuple is kept as given,
so a wrong length is reported by F.pad on the first call, not by the constructor.
"""

from ember import Tensor
from ember.nn import functional as F

from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]

_sextuple = _ntuple(6, "_sextuple")


class _CircularPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input: Tensor) -> Tensor:
        # Only the circular layers check the rank themselves (ValueError, as PyTorch's); the
        # others leave a wrong rank to F.pad (NotImplementedError for the index-mapped modes).
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim of (C, W) or (N, C, W) input by wrapping around; negative padding
    crops."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims of (C, H, W) or (N, C, H, W) input by wrapping around."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 3 and input.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims of (C, D, H, W) or (N, C, D, H, W) input by wrapping around."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4 and input.dim() != 5:
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value`` (any input rank, as F.pad's constant mode)."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _quadruple(padding)


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _sextuple(padding)


class _ReflectionPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim of (C, W) or (N, C, W) input with its mirror image, the edge not
    repeated (so each pad must be smaller than the dim)."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReflectionPad2d(_ReflectionPadNd):
    """Reflection padding of the last 2 dims of (C, H, W) or (N, C, H, W) input."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReflectionPad3d(_ReflectionPadNd):
    """Reflection padding of the last 3 dims of (C, D, H, W) or (N, C, D, H, W) input."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class _ReplicationPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim of (C, W) or (N, C, W) input by repeating the edge value."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReplicationPad2d(_ReplicationPadNd):
    """Replication padding of the last 2 dims of (C, H, W) or (N, C, H, W) input."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReplicationPad3d(_ReplicationPadNd):
    """Replication padding of the last 3 dims of (C, D, H, W) or (N, C, D, H, W) input."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class ZeroPad1d(ConstantPad1d):
    """ConstantPad1d with value 0."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """ConstantPad2d with value 0."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """ConstantPad3d with value 0."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
