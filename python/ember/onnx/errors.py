"""The ONNX exporter's errors, as ``torch.onnx.errors``."""

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """An export failed."""


class UnsupportedOperatorError(OnnxExporterError):
    """The traced program ran an op (or an op with arguments) that has no ONNX translation."""
