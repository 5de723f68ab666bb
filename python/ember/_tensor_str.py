"""Tensor printing that reproduces PyTorch's ``repr``/``str`` output character for character.

The only difference from PyTorch is the module prefix in dtype names (``ember.float64`` instead of
``torch.float64``).  All formatting decisions (integer mode, scientific notation, column widths,
line wrapping, summarisation, suffix placement) follow PyTorch 2.x, including its quirks, because
users and doctests compare the printed text directly.

The module only needs a small tensor interface: ``dtype`` (``str()`` gives ``'ember.<name>'``),
``shape``, ``dim()``, ``numel()``, ``device``, ``numpy()`` (``float()`` for bfloat16, which numpy
cannot represent), and optionally ``requires_grad`` / ``grad_fn``.  All numeric work is done on the
numpy array returned by ``numpy()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any, Iterator

import numpy as np

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_str"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

# Values each named profile installs; any explicit keyword given alongside a profile wins.
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors (same semantics as ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floating point output (default 4).
        threshold: element count above which the output is summarised (default 1000).
        edgeitems: items shown at the start and end of each summarised dimension (default 3).
        linewidth: characters per line used when wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; explicit arguments override it.
        sci_mode: force scientific notation on (True) or off (False); None chooses automatically.
    """
    # PyTorch silently ignores an unknown profile name; we do the same to stay compatible.
    for name, value in _PROFILES.get(profile, {}).items():
        setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # Unlike the other options, sci_mode is always overwritten: PyTorch resets it to automatic
    # whenever set_printoptions is called without it.
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict accepted by :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change print options; accepts the arguments of :func:`set_printoptions`."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


def _default_dtype_name() -> str:
    """Name of the current default floating dtype, e.g. ``'ember.float32'``.

    Imported lazily because this module is imported while ``ember`` itself is being initialised;
    tests monkeypatch this function so they can run without a built ``ember``.
    """
    try:
        import ember

        return str(ember.get_default_dtype())
    except (ImportError, AttributeError):
        return "ember.float32"


# ---------------------------------------------------------------------------------------------
# Element formatting
# ---------------------------------------------------------------------------------------------


def _extreme_values(values: np.ndarray) -> list[Any]:
    """Python scalars whose formatted text is the longest among ``values``.

    Correct rounding is monotonic, so for each sign the formatted length (digits before the point
    in fixed notation, exponent digits in scientific notation) is largest at the smallest or the
    largest magnitude.  Checking these at most four values avoids formatting every element.
    """
    candidates = []
    for part in (values[values > 0], values[values < 0]):
        if part.size:
            candidates.extend((part.min().item(), part.max().item()))
    return candidates


class _Formatter:
    """Chooses the notation and column width shared by every element of one tensor (or of the
    real or imaginary parts of a complex tensor), mirroring ``torch._tensor_str._Formatter``."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)
        if not floating:
            # Integers and bools: the widest text is at the minimum or maximum value.
            if flat.size:
                for value in (flat.min().item(), flat.max().item()):
                    self.max_width = max(self.max_width, len(f"{value}"))
            return

        finite_nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if finite_nonzero.size == 0:
            # Only zeros, nan and inf: PyTorch keeps integer mode and ignores a forced sci_mode.
            return

        # Magnitude statistics use float64 (as PyTorch does) so float16 cannot overflow; Python
        # floats make an overflowing ratio quietly become inf instead of warning.
        magnitudes = np.abs(finite_nonzero)
        smallest = float(magnitudes.min())
        largest = float(magnitudes.max())

        self.int_mode = bool(np.all(np.ceil(finite_nonzero) == finite_nonzero))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(
                largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
            )
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)

        precision = PRINT_OPTS.precision
        for value in _extreme_values(finite_nonzero):
            if self.sci_mode:
                width = len(f"{value:.{precision}e}")
            elif self.int_mode:
                # Integer-valued floats get a trailing "." to show the dtype is floating.
                width = len(f"{value:.0f}") + 1
            else:
                width = len(f"{value:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return text.rjust(self.max_width)


class _ElementFormatter:
    """Formats one Python scalar, using a second formatter for the imaginary part of complex
    values."""

    def __init__(self, real: _Formatter, imag: _Formatter | None = None) -> None:
        self.real = real
        self.imag = imag

    def element_length(self) -> int:
        # Width of one element plus the ", " separating it from the next.
        length = self.real.width() + 2
        if self.imag is not None:
            length += self.imag.width() + 1  # the imaginary part and its trailing "j"
        return length

    def __call__(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real_text = self.real.format(value.real)
        imag_text = (self.imag.format(value.imag) + "j").lstrip()
        # A sign (including the one of -0.0) already separates the two parts.
        if imag_text[0] in "+-":
            return real_text + imag_text
        return real_text + "+" + imag_text


# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------


def _summarized_data(values: np.ndarray) -> np.ndarray:
    """The elements that remain visible after summarisation; formatters are built from these only,
    so hidden values never influence widths or notation."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            # With edgeitems == 0, values[-0:] is the whole vector; PyTorch behaves the same way.
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return np.empty([0] * values.ndim, dtype=values.dtype)
    rows = range(values.shape[0])
    if values.shape[0] > 2 * edge:
        rows = [*range(edge), *range(values.shape[0] - edge, values.shape[0])]
    return np.stack([_summarized_data(values[i]) for i in rows])


def _vector_str(values: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormatter) -> str:
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / fmt.element_length()))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        items = [
            *(fmt(v) for v in values[:edge].tolist()),
            " ...",  # counts as one element when wrapping, like in PyTorch
            *(fmt(v) for v in values[-edge:].tolist()),
        ]
    else:
        items = [fmt(v) for v in values.tolist()]

    lines = [
        ", ".join(items[start : start + elements_per_line])
        for start in range(0, len(items), elements_per_line)
    ]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormatter) -> str:
    if values.ndim == 0:
        return fmt(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)

    edge = PRINT_OPTS.edgeitems
    count = values.shape[0]
    if summarize and count > 2 * edge:
        parts = [
            *(_nested_str(values[i], indent + 1, summarize, fmt) for i in range(edge)),
            "...",
            *(
                _nested_str(values[i], indent + 1, summarize, fmt)
                for i in range(count - edge, count)
            ),
        ]
    else:
        parts = [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(count)]

    # Sub-tensors of higher rank are separated by more blank lines (one per extra dimension).
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _array_str(values: np.ndarray, indent: int) -> str:
    """Render the bracketed contents of a non-empty array."""
    summarize = values.size > PRINT_OPTS.threshold

    def formatter_for(part: np.ndarray, floating: bool) -> _Formatter:
        return _Formatter(_summarized_data(part) if summarize else part, floating)

    if values.dtype.kind == "c":
        fmt = _ElementFormatter(formatter_for(values.real, True), formatter_for(values.imag, True))
    else:
        fmt = _ElementFormatter(formatter_for(values, values.dtype.kind == "f"))
    return _nested_str(values, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, moving one to a new line when the current line would overflow."""
    pieces = [text]
    # PyTorch's estimate of the current line length is 2 more than the real length (it counts
    # from rfind("\n") + 1 without subtracting the newline); keep it so wrapping points match.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


# ---------------------------------------------------------------------------------------------
# Tensor access
# ---------------------------------------------------------------------------------------------


def _host_array(tensor: Any) -> np.ndarray:
    """The tensor's values as a numpy array of the tensor's shape."""
    source = tensor
    # A PyTorch-like numpy() refuses accelerator tensors and tensors that require grad, but
    # printing must work for them, so go through host / detached copies when those exist.
    if getattr(getattr(source, "device", None), "type", "cpu") != "cpu" and hasattr(source, "cpu"):
        source = source.cpu()
    if getattr(source, "requires_grad", False) and hasattr(source, "detach"):
        source = source.detach()
    if str(source.dtype) == "ember.bfloat16":
        # numpy has no bfloat16; every bfloat16 value is exactly representable as float32.
        values = np.asarray(source.float().numpy())
    else:
        values = np.asarray(source.numpy())
    return values.reshape(tuple(int(n) for n in tensor.shape))


def _grad_fn_suffix(tensor: Any) -> str | None:
    try:
        grad_fn = getattr(tensor, "grad_fn", None)
    except RuntimeError:
        # PyTorch prints this when reading grad_fn fails (e.g. an invalid in-place view).
        return "grad_fn=<Invalid>"
    if grad_fn is None:
        return None
    name_method = getattr(grad_fn, "name", None)
    name = name_method() if callable(name_method) else type(grad_fn).__name__
    # C++ nodes may report a namespaced name ("torch::autograd::AddBackward0").
    return f"grad_fn=<{name.rsplit('::', 1)[-1]}>"


def _quantization_suffixes(tensor: Any) -> list[str]:
    scheme = tensor.qscheme()
    out = [f"quantization_scheme={scheme}"]
    if scheme.name.startswith("per_channel"):
        out += [f"scale={tensor.q_per_channel_scales()!r}",
                f"zero_point={tensor.q_per_channel_zero_points()!r}",
                f"axis={tensor.q_per_channel_axis()}"]
    else:
        out += [f"scale={tensor.q_scale()}", f"zero_point={tensor.q_zero_point()}"]
    return out


def tensor_str(tensor: Any) -> str:
    """Return the PyTorch-style ``repr``/``str`` of ``tensor``, e.g. ``tensor([1., 2.])``."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []

    device = getattr(tensor, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        suffixes.append(f"device='{device}'")

    dtype_name = str(tensor.dtype)
    default_name = _default_dtype_name()
    # PyTorch pairs float64 with complex128 and every other default with complex64.
    default_complex = "ember.complex128" if default_name == "ember.float64" else "ember.complex64"
    # These dtypes can be inferred back from the printed values, so their name is omitted.
    inferable = dtype_name in (default_name, default_complex, "ember.int64", "ember.bool")
    shape = tuple(int(n) for n in tensor.shape)

    if getattr(tensor, "is_quantized", False):
        # As PyTorch: the dequantized values, then the size, dtype and quantization parameters.
        suffixes += [f"size={shape}", f"dtype={dtype_name}", *_quantization_suffixes(tensor)]
        body = _array_str(_host_array(tensor.dequantize()), indent) if tensor.numel() else "[]"
    elif tensor.numel() == 0:
        # Like NumPy, spell out the shape unless it is the plain (0,) that "[]" already implies.
        if tensor.dim() != 1:
            suffixes.append(f"size={shape}")
        # Nothing can be inferred from no values, so every non-default dtype (int64 too) is shown.
        if dtype_name != default_name:
            suffixes.append(f"dtype={dtype_name}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if not inferable:
            suffixes.append(f"dtype={dtype_name}")
        body = _array_str(_host_array(tensor), indent)

    grad_suffix = _grad_fn_suffix(tensor)
    if grad_suffix is not None:
        suffixes.append(grad_suffix)
    elif getattr(tensor, "requires_grad", False):
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + body, suffixes, indent)
