"""ember.onnx.export: runs the model once under the op observer's tracer hook and writes the
ONNX graph the translations (_symbolic*.py) built from the ops it saw."""

from __future__ import annotations

import inspect
import io
import os
import threading

import ember
from ember._C import _profiler as _hooks
from ember.onnx import _symbolic, _symbolic_modules, _symbolic_nn, _symbolic_shape  # noqa: F401
from ember.onnx._graph import Graph, Value, onnx_type
from ember.onnx.errors import OnnxExporterError, UnsupportedOperatorError

DEFAULT_OPSET = 17
MIN_OPSET = 9
MAX_OPSET = 21

_state = threading.local()


def is_in_onnx_export():
    """Whether the calling thread is tracing a model for ember.onnx.export."""
    return getattr(_state, "exporting", False)


def _flatten(obj, out):
    if isinstance(obj, ember.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _flatten(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _flatten(item, out)
    elif obj is not None and not isinstance(obj, (bool, int, float, str)):
        raise OnnxExporterError(f"onnx.export: cannot export a model input or output of type "
                                f"{type(obj).__name__}")
    return out


def _split_args(args, kwargs):
    if isinstance(args, ember.Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):  # PyTorch's legacy form: trailing kwargs dict
        kwargs.update(args[-1])
        args = args[:-1]
    return args, kwargs


def _default_input_names(model, count):
    try:
        params = [p for p in inspect.signature(model.forward if hasattr(model, "forward")
                                               else model).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params]
    except (TypeError, ValueError):
        names = []
    if len(names) >= count:
        return names[:count]
    return [f"input_{i}" for i in range(count)]


def _tracer(graph, probe_shapes):
    """The tracer callback. ``probe_shapes``: the result shapes of each op in the probe run
    (dynamic axes one larger), or None; the n-th reported op of both runs is the same call."""
    counter = [0]

    def on_op(op, is_method, args, names, result):
        if graph.suspended or not _holds_tensor(result):
            return  # a query (x.shape, x.item()) or an update of a constant: nothing to emit
        index = counter[0]
        counter[0] += 1
        results = _flatten(result, [])
        probe = probe_shapes[index] if probe_shapes is not None else None
        graph.current_probe = {} if probe is None else {
            id(t): shape for t, shape in zip(results, probe)}
        dynamic_result = any(tuple(t.shape) != graph.current_probe.get(id(t), tuple(t.shape))
                             for t in results)
        if op in _symbolic_shape.FACTORIES and (dynamic_result or (probe_shapes is None and any(
                int(d) in graph.dynamic_sizes for d in result.shape))):
            # zeros(x.size(0), ...): a size of a dynamic axis keeps following that axis.
            _symbolic_shape.factory(graph, op, args, names, result)
            return
        if not any(graph.is_traced(a) or _holds_traced(graph, a) for a in args):
            if graph.fold_constants or not any(isinstance(a, ember.Tensor) for a in args):
                return  # no input depends on the graph inputs: the result is a constant
        translate = _symbolic.SYMBOLICS.get(op)
        if translate is None:
            raise UnsupportedOperatorError(
                f"onnx.export: op '{op}' has no ONNX translation (the traced model called it "
                f"with {_describe(args)}); rewrite that part of the model with supported ops")
        translate(_symbolic.Call(graph, op, is_method, args, names, result))

    return on_op


def _probe_recorder(graph, shapes):
    def on_op(op, is_method, args, names, result):
        if graph.suspended or not _holds_tensor(result):
            return
        shapes.append([tuple(t.shape) for t in _flatten(result, [])])

    return on_op


def _grown(args, kwargs, inputs, input_names, dynamic_axes):
    """The example inputs with every dynamic axis one longer (the first slice repeated), for
    the probe run; None when an input cannot grow (an empty axis)."""
    replaced = {}
    for tensor, name in zip(inputs, input_names):
        grown = tensor
        for axis in dynamic_axes.get(name, {}):
            if grown.shape[axis] == 0:
                return None
            grown = ember.cat([grown, grown.narrow(axis, 0, 1)], axis)
        replaced[id(tensor)] = grown

    def swap(obj):
        if isinstance(obj, ember.Tensor):
            return replaced.get(id(obj), obj)
        if isinstance(obj, tuple):
            return tuple(swap(o) for o in obj)
        if isinstance(obj, list):
            return [swap(o) for o in obj]
        if isinstance(obj, dict):
            return {k: swap(v) for k, v in obj.items()}
        return obj

    return swap(args), swap(kwargs), {id(t): tuple(replaced[id(t)].shape) for t in inputs}


def _run_traced(model, args, kwargs, graph, tracer):
    unwrap_modules = _symbolic_modules.wrap_modules(model, graph)
    _hooks._set_tracer(tracer)
    try:
        with ember.no_grad():
            return model(*args, **kwargs)
    finally:
        _hooks._set_tracer(None)
        unwrap_modules()


def _holds_tensor(obj):
    if isinstance(obj, ember.Tensor):
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_tensor(x) for x in obj)


def _holds_traced(graph, obj):
    if isinstance(obj, (list, tuple)):
        return any(graph.is_traced(x) or _holds_traced(graph, x) for x in obj)
    return False


def _describe(args):
    parts = []
    for a in args:
        if isinstance(a, ember.Tensor):
            parts.append(f"Tensor{list(a.shape)} {str(a.dtype).replace('ember.', '')}")
        else:
            parts.append(type(a).__name__)
    return "(" + ", ".join(parts) + ")"


def export(model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None,
           input_names=None, output_names=None, opset_version=None, dynamic_axes=None,
           keep_initializers_as_inputs=False, dynamo=False, training=None,
           operator_export_type=None, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True, external_data=True,
           report=False, verify=False, optimize=False, **_unused):
    """Traces ``model(*args, **kwargs)`` and writes its ONNX graph to ``f`` (a path or a binary
    file object) and returns None, as PyTorch's TorchScript-based exporter; without ``f``,
    returns an ``ONNXProgram`` (``save``, ``model_proto``, callable), as its dynamo exporter."""
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as e:
        raise ModuleNotFoundError("onnx.export needs the onnx package: pip install onnx") from e
    from ember.onnx import TrainingMode

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(f"onnx.export: opset_version {opset} is not supported; use "
                         f"{MIN_OPSET}..{MAX_OPSET}")
    if training not in (None, TrainingMode.EVAL, TrainingMode.PRESERVE):
        raise ValueError("onnx.export: training=TrainingMode.TRAINING is not supported; export "
                         "in eval mode")
    args, kwargs = _split_args(args, kwargs)
    inputs = _flatten([args, kwargs], [])
    input_names = list(input_names or [])
    defaults = _default_input_names(model, len(inputs))
    input_names += defaults[len(input_names):]
    if len(input_names) > len(inputs):
        raise ValueError(f"onnx.export: {len(input_names)} input_names for {len(inputs)} "
                         "tensor inputs")
    dynamic_axes = dict(dynamic_axes or {})
    for name, axes in dynamic_axes.items():
        if isinstance(axes, (list, tuple)):
            dynamic_axes[name] = {int(a): f"{name}_dynamic_axes_{i + 1}"
                                  for i, a in enumerate(axes)}

    params = {}
    if isinstance(model, ember.nn.Module):
        for name, p in model.named_parameters():
            params.setdefault(id(p), name)
        for name, b in model.named_buffers():
            params.setdefault(id(b), name)
    graph = Graph(opset, params, do_constant_folding)
    for tensor, name in zip(inputs, input_names):
        graph.bind(tensor, Value(name, tensor.dtype, tuple(tensor.shape)))
        for axis in dynamic_axes.get(name, {}):
            size = int(tensor.shape[axis])
            graph.dynamic_sizes.add(size)
            graph.dynamic_sources.setdefault(size, (name, int(axis)))

    # Each module's own mode is restored afterwards (PyTorch restores the top module's on the
    # whole tree, which would flip an eval submodule of a training wrapper).
    modes = [(m, m.training) for m in model.modules()] if isinstance(model, ember.nn.Module) \
        else []
    if modes and training != TrainingMode.PRESERVE:
        model.eval()
    _state.exporting = True
    try:
        probe_shapes = None
        grown = _grown(args, kwargs, inputs, input_names, dynamic_axes) if dynamic_axes else None
        if grown is not None:
            # The probe run: which sizes follow the dynamic axes, op by op (the trace sees
            # numbers; comparing two runs tells which of them are sizes of dynamic axes).
            probe_graph = Graph(opset, params, do_constant_folding)
            probe_graph.emit_modules = False
            probe_shapes = []
            _run_traced(model, grown[0], grown[1], probe_graph,
                        _probe_recorder(probe_graph, probe_shapes))
            for tensor in inputs:
                graph.probe_shapes[id(tensor)] = grown[2][id(tensor)]
            graph.module_shapes = probe_graph.module_shapes
        recorded = []
        counting = _probe_recorder(graph, recorded)
        tracer = _tracer(graph, probe_shapes)

        def both(*call):
            counting(*call)
            tracer(*call)

        outputs = _run_traced(model, args, kwargs, graph, both)
        if probe_shapes is not None and len(recorded) != len(probe_shapes):
            raise OnnxExporterError(
                "onnx.export: the model ran different ops for another size of its dynamic axes "
                "(control flow depends on the batch size); export it without dynamic_axes")
    finally:
        _state.exporting = False
        for module, mode in modes:
            module.training = mode

    results = _flatten(outputs, [])
    output_names = list(output_names or [])
    output_names += [f"output_{i}" for i in range(len(output_names), len(results))]
    if len(output_names) > len(results):
        raise ValueError(f"onnx.export: {len(output_names)} output_names for {len(results)} "
                         "tensor outputs")
    for tensor, name in zip(results, output_names):
        graph.node("Identity", [graph.value(tensor).name], outputs=[name])

    def value_info(name, tensor, dynamic):
        if dynamic is None:  # sizes unknown: the rank only
            return helper.make_tensor_value_info(name, onnx_type(tensor.dtype),
                                                 [None] * tensor.dim())
        shape = [dynamic.get(i, int(s)) for i, s in enumerate(tensor.shape)]
        return helper.make_tensor_value_info(name, onnx_type(tensor.dtype), shape)

    graph.remove_dead_nodes(output_names)
    has_dynamic = bool(graph.dynamic_sizes)
    graph_inputs = [value_info(n, t, dynamic_axes.get(n, {})) for t, n in zip(inputs, input_names)]
    graph_outputs = [value_info(n, t, dynamic_axes.get(n, None if has_dynamic else {}))
                     for t, n in zip(results, output_names)]
    initializers = [numpy_helper.from_array(a, name) for name, a in graph.initializers.items()]
    if not export_params or keep_initializers_as_inputs:
        for init in initializers:
            graph_inputs.append(helper.make_tensor_value_info(init.name, init.data_type,
                                                              list(init.dims)))
    if not export_params:
        initializers = []
    onnx_graph = helper.make_graph(graph.nodes, type(model).__name__, graph_inputs,
                                   graph_outputs, initializer=initializers)
    opsets = [helper.make_opsetid("", opset)]
    model_proto = helper.make_model(onnx_graph, opset_imports=opsets, producer_name="ember",
                                    producer_version=ember.__version__)
    model_proto.ir_version = helper.find_min_ir_version_for(opsets)
    try:
        onnx.checker.check_model(model_proto)
    except onnx.checker.ValidationError as e:
        raise OnnxExporterError(f"onnx.export: the exported graph fails onnx.checker: {e}") from e
    if f is None:  # PyTorch's dynamo=True form: the program, to save or run
        from ember.onnx._program import ONNXProgram

        return ONNXProgram(model_proto, input_names[: len(inputs)], output_names)
    data = model_proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(data)
    elif isinstance(f, io.IOBase) or hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"onnx.export: f must be a path or a binary file, got {type(f).__name__}")
    if verbose:
        print(helper.printable_graph(model_proto.graph))
    return None
