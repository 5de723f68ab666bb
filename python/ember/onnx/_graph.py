"""The ONNX graph a trace builds: values (tensors computed from the graph's inputs), constants
(parameters, buffers, anything else the program read), and nodes, with helpers the op
translations (_symbolic.py) share."""

from __future__ import annotations

import numpy as np

import ember

_ONNX_TYPES = {
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13, "bfloat16": 16,
}
_NUMPY_TYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64,
    "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
}


def dtype_name(dtype):
    return str(dtype).replace("ember.", "")


def onnx_type(dtype):
    name = dtype_name(dtype)
    if name not in _ONNX_TYPES:
        raise ValueError(f"onnx.export: dtype {name} has no ONNX tensor type")
    return _ONNX_TYPES[name]


class Value:
    """A tensor of the graph: its name, dtype and the shape seen while tracing."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(shape)

    @property
    def rank(self):
        return len(self.shape)


class Graph:
    """Nodes in trace order, initializers, and the map from traced tensors to values."""

    def __init__(self, opset, param_names, fold_constants):
        self.opset = opset
        self.nodes = []
        self.initializers = {}  # name -> numpy array
        self.fold_constants = fold_constants
        self._values = {}  # id(tensor) -> (Value, tensor): the tensor keeps its id unique
        self._constants = {}  # id(tensor) -> (name, tensor)
        self._param_names = param_names  # id(parameter or buffer) -> qualified name
        self._counter = 0
        self.suspended = 0  # > 0 while a module translation runs the module's own ops
        self.emit_modules = True  # False in the probe run: module translations only run
        self.probe_shapes = {}  # id(tensor) -> its shape in the probe run (dynamic axes + 1)
        self.current_probe = {}  # the same for the results of the op being translated
        self.module_shapes = []  # result shapes of module translations, probe run first
        self.dynamic_sizes = set()  # sizes the dynamic axes had while tracing
        self.dynamic_sources = {}  # such a size -> (graph input name, axis)

    # -- names ----------------------------------------------------------------------------
    def fresh(self, hint="v"):
        self._counter += 1
        return f"/{hint}_{self._counter}"

    # -- values ---------------------------------------------------------------------------
    def bind(self, tensor, value):
        self._values[id(tensor)] = (value, tensor)

    def is_traced(self, obj):
        return isinstance(obj, ember.Tensor) and id(obj) in self._values

    def value(self, tensor):
        """The graph value of a tensor: traced, or a constant (initializer)."""
        entry = self._values.get(id(tensor))
        if entry is not None:
            return entry[0]
        return self.constant_tensor(tensor)

    def constant_tensor(self, tensor):
        entry = self._constants.get(id(tensor))
        if entry is None:
            name = self._param_names.get(id(tensor)) or self.fresh("Constant")
            self.initializers[name] = to_numpy(tensor)
            entry = (name, tensor)
            self._constants[id(tensor)] = entry
        return Value(entry[0], tensor.dtype, tuple(tensor.shape))

    def constant(self, array, hint="const"):
        """An initializer holding a NumPy array (or number, with a dtype given by the array)."""
        array = np.asarray(array)
        name = self.fresh(hint)
        self.initializers[name] = array
        return name

    def ints(self, values):
        return self.constant(np.asarray(list(values), dtype=np.int64), "ints")

    def scalar(self, value, dtype):
        """A 0-d constant of an Ember dtype."""
        return self.constant(np.asarray(value, dtype=_NUMPY_TYPES[dtype_name(dtype)]), "scalar")

    # -- nodes ----------------------------------------------------------------------------
    def node(self, op_type, inputs, outputs=1, **attributes):
        """Appends a node; returns its output names (a str for one output)."""
        from onnx import helper

        if isinstance(outputs, int):
            names = [self.fresh(op_type) for _ in range(outputs)]
        else:
            names = list(outputs)
        attributes = {k: v for k, v in attributes.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name=self.fresh(op_type + "_node"), **attributes))
        return names[0] if len(names) == 1 else names

    def remove_dead_nodes(self, outputs):
        """Drops the nodes (and initializers) no graph output depends on: ops the program ran
        only to decide its control flow (a mask compared with a causal one, a size check)."""
        needed = set(outputs)
        kept = []
        for node in reversed(self.nodes):
            if any(o in needed for o in node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
        self.nodes = kept[::-1]
        self.initializers = {k: v for k, v in self.initializers.items() if k in needed}

    def cast(self, name, from_dtype, to_dtype):
        if dtype_name(from_dtype) == dtype_name(to_dtype):
            return name
        return self.node("Cast", [name], to=onnx_type(to_dtype))

    def output(self, tensor, name):
        """Binds an op's result tensor to a node output."""
        self.bind(tensor, Value(name, tensor.dtype, tuple(tensor.shape)))
        probe = self.current_probe.get(id(tensor))
        if probe is not None:
            self.probe_shapes[id(tensor)] = probe
        return name

    def probe_shape(self, tensor):
        """The shape ``tensor`` had in the probe run (its own shape when unknown: static)."""
        return self.probe_shapes.get(id(tensor), self.current_probe.get(id(tensor),
                                                                       tuple(tensor.shape)))

    def has_probe(self):
        return bool(self.probe_shapes)

    def dynamic_dim(self, now, probed):
        """A 1-element int64 value holding a size that is ``now`` in the trace and ``probed``
        in the probe run, read from the shape of the latest traced tensor that has it (graph
        inputs included); None when no traced tensor has such an axis."""
        for value, tensor in reversed(list(self._values.values())):
            probe = self.probe_shapes.get(id(tensor))
            if probe is None:
                continue
            for axis, (a, b) in enumerate(zip(tensor.shape, probe)):
                if a == now and b == probed:
                    shape = self.node("Shape", [value.name])
                    return self.slice(shape, [axis], [axis + 1], [0])
        return None

    # -- opset-dependent forms ------------------------------------------------------------
    def require(self, opset, what):
        if self.opset < opset:
            from ember.onnx.errors import UnsupportedOperatorError

            raise UnsupportedOperatorError(f"onnx.export: {what} needs opset_version >= {opset} "
                                           f"(exporting at {self.opset})")

    def reduce(self, op_type, name, axes, keepdims):
        """A Reduce* node: axes as an input from opset 18 (ReduceSum: 13), else an attribute.
        axes None reduces everything."""
        keepdims = int(bool(keepdims))
        input_axes = self.opset >= 18 or (op_type == "ReduceSum" and self.opset >= 13)
        if axes is None:
            return self.node(op_type, [name], keepdims=keepdims)
        axes = [int(a) for a in axes]
        if input_axes:
            return self.node(op_type, [name, self.ints(axes)], keepdims=keepdims)
        return self.node(op_type, [name], axes=axes, keepdims=keepdims)

    def unsqueeze(self, name, axes):
        if self.opset < 13:
            return self.node("Unsqueeze", [name], axes=[int(a) for a in axes])
        return self.node("Unsqueeze", [name, self.ints(axes)])

    def squeeze(self, name, axes=None):
        if axes is None:
            return self.node("Squeeze", [name])
        if self.opset < 13:
            return self.node("Squeeze", [name], axes=[int(a) for a in axes])
        return self.node("Squeeze", [name, self.ints(axes)])

    def split(self, name, sizes, axis):
        if self.opset < 13:
            return self.node("Split", [name], outputs=len(sizes), axis=int(axis),
                             split=[int(s) for s in sizes])
        return self.node("Split", [name, self.ints(sizes)], outputs=len(sizes), axis=int(axis))

    def slice(self, name, starts, ends, axes, steps=None):
        if self.opset < 10:
            if steps is not None and any(s != 1 for s in steps):
                self.require(10, "slicing with a step")
            return self.node("Slice", [name], starts=list(starts), ends=list(ends),
                             axes=list(axes))
        inputs = [name, self.ints(starts), self.ints(ends), self.ints(axes)]
        if steps is not None:
            inputs.append(self.ints(steps))
        return self.node("Slice", inputs)

    def softmax(self, op_type, name, axis, rank):
        """Softmax/LogSoftmax over one axis; before opset 13 the op flattens from `axis` on,
        so another axis than the last is moved last and back."""
        axis %= max(rank, 1)
        if self.opset >= 13 or axis == rank - 1:
            return self.node(op_type, [name], axis=axis)
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        moved = self.node("Transpose", [name], perm=perm)
        y = self.node(op_type, [moved], axis=rank - 1)
        return self.node("Transpose", [y], perm=perm)

    def clip(self, name, low, high, dtype):
        """Clip to constant bounds (numbers or None)."""
        if self.opset < 11:
            return self.node("Clip", [name], min=float(-3.4e38 if low is None else low),
                             max=float(3.4e38 if high is None else high))
        inputs = [name, "" if low is None else self.scalar(low, dtype)]
        if high is not None:
            inputs.append(self.scalar(high, dtype))
        return self.node("Clip", inputs if inputs[-1] != "" else inputs[:1])


def to_numpy(tensor):
    t = tensor.detach()
    if dtype_name(t.dtype) == "bfloat16":
        raise ValueError("onnx.export: bfloat16 constants are not written; convert the model to "
                         "float32 first (model.float())")
    if t.is_quantized:
        raise ValueError("onnx.export: quantized tensors are not exported; export the float "
                         "model")
    return np.ascontiguousarray(t.numpy()).copy()
