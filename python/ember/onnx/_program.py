"""ONNXProgram: what ``ember.onnx.export`` returns when no file is given (PyTorch's exporter
returns one with ``dynamo=True``): the model, ``save``, and running it in ONNX Runtime."""

from __future__ import annotations

import os

import numpy as np

import ember


class ONNXProgram:
    def __init__(self, model_proto, input_names, output_names):
        self.model_proto = model_proto
        self._input_names = list(input_names)
        self._output_names = list(output_names)
        self._session = None

    @property
    def model(self):
        return self.model_proto

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        """Writes the model to a path or a binary file."""
        import onnx

        proto = onnx.ModelProto()
        proto.CopyFrom(self.model_proto)
        if keep_initializers_as_inputs:
            from onnx import helper

            have = {i.name for i in proto.graph.input}
            for init in proto.graph.initializer:
                if init.name not in have:
                    proto.graph.input.append(helper.make_tensor_value_info(
                        init.name, init.data_type, list(init.dims)))
        if not include_initializers:
            del proto.graph.initializer[:]
        data = proto.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            if external_data:
                onnx.save_model(proto, os.fspath(destination), save_as_external_data=True)
                return
            with open(destination, "wb") as f:
                f.write(data)
        else:
            destination.write(data)

    def optimize(self):
        """Drops nodes and initializers no output depends on (the export already folded the
        constant subgraphs)."""
        graph = self.model_proto.graph
        needed = {o.name for o in graph.output}
        kept = []
        for node in reversed(list(graph.node)):
            if any(o in needed for o in node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
        del graph.node[:]
        graph.node.extend(kept[::-1])
        inits = [i for i in graph.initializer if i.name in needed]
        del graph.initializer[:]
        graph.initializer.extend(inits)
        self._session = None

    def initialize_inference_session(self, initializer=None):
        import onnxruntime

        if initializer is not None:
            self._session = initializer(self.model_proto.SerializeToString())
        else:
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])

    def release(self):
        self._session = None

    def __call__(self, *args, **kwargs):
        """Runs the model in ONNX Runtime on tensors; returns Ember tensors."""
        if self._session is None:
            self.initialize_inference_session()
        from ember.onnx._export import _flatten

        tensors = _flatten([args, kwargs], [])
        feeds = {name: np.ascontiguousarray(t.detach().numpy())
                 for name, t in zip(self._input_names, tensors)}
        return [ember.from_numpy(np.ascontiguousarray(r))
                for r in self._session.run(None, feeds)]

    def __repr__(self):
        return (f"ONNXProgram(inputs={self._input_names}, outputs={self._output_names}, "
                f"nodes={len(self.model_proto.graph.node)})")
