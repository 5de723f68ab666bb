"""ember.onnx: exports a model to ONNX by tracing the ops Ember runs (``torch.onnx.export``).

    ember.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})

The tracer is the op observer every binding reports to (docs/design/onnx-export.md): while the
model runs once on the example inputs, each op it calls from Python is translated into ONNX
nodes. Ops whose inputs do not depend on the graph's inputs are folded into constants.
"""

from enum import Enum

from ember.onnx import errors
from ember.onnx._export import export, is_in_onnx_export
from ember.onnx._program import ONNXProgram
from ember.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = [
    "ONNXProgram",
    "OnnxExporterError",
    "OperatorExportTypes",
    "TrainingMode",
    "UnsupportedOperatorError",
    "errors",
    "export",
    "is_in_onnx_export",
    "producer_name",
]

producer_name = "ember"


class TrainingMode(Enum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(Enum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3
