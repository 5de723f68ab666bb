"""ONNX translations of the shape, indexing, joining and reduction ops."""

from __future__ import annotations

import numpy as np

import ember
from ember.onnx._symbolic import INT64_MAX, _dims, _is_tensor, operand, register, tensor_name
from ember.onnx.errors import UnsupportedOperatorError


def reshape_target(g, x, target, result):
    """The Reshape shape for a target seen while tracing, with the sizes that follow dynamic
    axes kept dynamic: ONNX's 0 (copy) where the input has the same size at the same index,
    -1 for one other. Which sizes follow the dynamic axes comes from the probe run (the same
    op with every dynamic axis one longer); without one, from matching the traced sizes."""
    target = [int(t) for t in target]
    if not g.dynamic_sizes:
        return target
    out_probe = g.current_probe.get(id(result))
    if out_probe is not None:
        in_probe = g.probe_shape(x)
        out = list(target)
        rest = []
        for i, (now, probed) in enumerate(zip(target, out_probe)):
            if now == probed:
                continue
            if i < x.dim() and x.shape[i] == now and in_probe[i] == probed:
                out[i] = 0
            else:
                rest.append(i)
        if len(rest) == 1:
            out[rest[0]] = -1
        elif rest:
            # Several sizes follow dynamic axes: each is read from the input's shape.
            return _shape_from_input(g, x, in_probe, target, out_probe, out)
        return out
    out = list(target)
    accounted = []
    for i, t in enumerate(target):
        if i < x.dim() and t == x.shape[i] and t in g.dynamic_sizes:
            out[i] = 0
            accounted.append(t)
    if -1 not in out:
        remaining = [s for s in g.dynamic_sizes if s > 1 and s not in accounted]
        # A size equal to a dynamic one first (a batch moved elsewhere), else a multiple of one
        # (a batch merged with other axes).
        exact = [i for i, t in enumerate(out) if t in remaining]
        multiple = [i for i, t in enumerate(out) if t > 1 and any(t % s == 0 for s in remaining)]
        chosen = exact or multiple
        if chosen:
            out[chosen[0]] = -1
    return out


def _dim_from_input(g, x, in_probe, now, probed):
    """A 1-element int64 value equal to a product of consecutive dims of x's shape that is
    ``now`` in the trace and ``probed`` in the probe run, or None."""
    shape = g.node("Shape", [g.value(x).name])
    rank = x.dim()
    # A product of consecutive axes (a merge), or one divided by a static factor (a split).
    for divided in (False, True):
        for i in range(rank):
            for j in range(i + 1, rank + 1):
                a = int(np.prod(x.shape[i:j]))
                b = int(np.prod(in_probe[i:j]))
                if divided:
                    if not (now and probed and a % now == 0 and b % probed == 0 and
                            a // now == b // probed and a // now > 1):
                        continue
                elif a != now or b != probed:
                    continue
                piece = g.slice(shape, [i], [j], [0])
                if j > i + 1:
                    piece = g.reduce("ReduceProd", piece, [0], True)
                if divided:
                    piece = g.node("Div", [piece, g.ints([a // now])])
                return piece
    return None


def _shape_from_input(g, x, in_probe, target, out_probe, out):
    """A shape value for Reshape whose dynamic sizes are computed from x's shape; returns it
    as a value name (str) instead of a list."""
    parts = []
    for i, (now, probed) in enumerate(zip(target, out_probe)):
        if out[i] == 0 or now == probed:
            parts.append(g.ints([out[i]]))
            continue
        piece = _dim_from_input(g, x, in_probe, now, probed) or g.dynamic_dim(now, probed)
        if piece is None:
            raise UnsupportedOperatorError(
                f"onnx.export: reshape of {list(x.shape)} to {target}: size {now} follows a "
                "dynamic axis but is no product (or quotient) of the input's axes; reshape in two "
                "steps")
        parts.append(piece)
    return g.node("Concat", parts, axis=0)


def _reshape(c, target):
    g = c.g
    x = c.arg(0)
    v = g.value(x)
    if list(target) == list(v.shape) and not g.dynamic_sizes:
        c.out(v.name)
        return
    shape = reshape_target(g, x, target, c.result)
    shape_name = shape if isinstance(shape, str) else g.ints(shape)
    c.out(g.node("Reshape", [v.name, shape_name]))


@register("view", "reshape", "flatten", "unflatten", "reshape_as", "view_as", "ravel",
          "_unsafe_view")
def _view(c):
    if c.op == "view" and not isinstance(c.arg(1), (list, tuple, int, ember.Size)):
        c.fail("with a dtype (a bit reinterpretation) has no ONNX form")
    _reshape(c, tuple(c.result.shape))


@register("squeeze", "squeeze_")
def _squeeze(c):
    x = c.arg(0)
    dims = c.arg(1, "dim")
    g = c.g
    if dims is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = [d for d in _dims(dims, max(x.dim(), 1)) if x.dim() and x.shape[d] == 1]
    if not axes:
        c.out(tensor_name(g, x))
        return
    c.out(g.squeeze(tensor_name(g, x), axes))


@register("unsqueeze", "unsqueeze_")
def _unsqueeze(c):
    x, dim = c.arg(0), int(c.arg(1, "dim"))
    c.out(c.g.unsqueeze(tensor_name(c.g, x), [dim % (x.dim() + 1)]))


@register("permute")
def _permute(c):
    x = c.arg(0)
    dims = c.args[1:] if not isinstance(c.arg(1), (list, tuple)) else c.arg(1)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    perm = _dims(dims, x.dim())
    c.out(c.g.node("Transpose", [tensor_name(c.g, x)], perm=perm))


@register("transpose", "swapaxes", "swapdims", "transpose_", "movedim", "moveaxis", "t", "T",
          "mT", "adjoint")
def _transpose(c):
    x = c.arg(0)
    rank = x.dim()
    if rank < 2:
        c.out(tensor_name(c.g, x))
        return
    perm = list(range(rank))
    if c.op in ("t", "T"):
        perm = perm[::-1]
    elif c.op in ("mT", "adjoint"):
        perm[-1], perm[-2] = perm[-2], perm[-1]
    elif c.op in ("movedim", "moveaxis"):
        src = _dims(c.arg(1, "source"), rank)
        dst = _dims(c.arg(2, "destination"), rank)
        rest = [d for d in range(rank) if d not in src]
        perm = [None] * rank
        for s, d in zip(src, dst):
            perm[d] = s
        it = iter(rest)
        perm = [p if p is not None else next(it) for p in perm]
    else:
        d0, d1 = _dims([c.arg(1, "dim0"), c.arg(2, "dim1")], rank)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    c.out(c.g.node("Transpose", [tensor_name(c.g, x)], perm=perm))


@register("expand", "expand_as", "broadcast_to")
def _expand(c):
    x = c.arg(0)
    g = c.g
    out_shape = list(c.result.shape)
    pad = len(out_shape) - x.dim()
    in_shape = [1] * pad + list(x.shape)
    in_probe = [1] * pad + list(g.probe_shape(x))
    out_probe = list(g.current_probe.get(id(c.result), out_shape))
    shape = []
    computed = False
    for i, (now, probed) in enumerate(zip(out_shape, out_probe)):
        if in_shape[i] == now and in_probe[i] == probed:
            shape.append(1)  # the input's own size (dynamic or not) is kept
        elif now == probed:
            shape.append(now)
        else:  # a size-1 axis broadcast to a dynamic size: read it from a tensor that has it
            piece = g.dynamic_dim(now, probed)
            if piece is None:
                raise UnsupportedOperatorError(
                    f"onnx.export: expand of {list(x.shape)} to {out_shape}: size {now} follows "
                    "a dynamic axis that no traced tensor has; export without that axis dynamic")
            shape.append(piece)
            computed = True
    if computed:
        parts = [p if isinstance(p, str) else g.ints([p]) for p in shape]
        shape_name = g.node("Concat", parts, axis=0)
    else:
        shape_name = g.ints(shape)
    c.out(g.node("Expand", [tensor_name(g, x), shape_name]))


@register("repeat")
def _repeat(c):
    x = c.arg(0)
    reps = list(c.result.shape)
    reps = [r // s if s else r for r, s in zip(reps, [1] * (len(reps) - x.dim()) + list(x.shape))]
    name = tensor_name(c.g, x)
    if len(reps) > x.dim():
        name = c.g.node("Reshape", [name, c.g.ints([1] * (len(reps) - x.dim()) + list(x.shape))])
    c.out(c.g.node("Tile", [name, c.g.ints(reps)]))


@register("cat", "concat", "concatenate")
def _cat(c):
    tensors = [t for t in c.arg(0, "tensors") if not (t.dim() == 1 and t.shape[0] == 0)]
    dim = int(c.arg(1, "dim", 0))
    dtype = c.result.dtype
    names = [operand(c.g, t, dtype) for t in tensors]
    c.out(c.g.node("Concat", names, axis=dim % c.result.dim()))


@register("stack")
def _stack(c):
    tensors = c.arg(0, "tensors")
    dim = int(c.arg(1, "dim", 0)) % c.result.dim()
    dtype = c.result.dtype
    names = [c.g.unsqueeze(operand(c.g, t, dtype), [dim]) for t in tensors]
    c.out(c.g.node("Concat", names, axis=dim))


def _split_outputs(c, x, dim, results, squeeze=False):
    sizes = [r.shape[dim] if not squeeze else 1 for r in results]
    names = c.g.split(tensor_name(c.g, x), sizes, dim)
    if isinstance(names, str):
        names = [names]
    for name, r in zip(names, results):
        if squeeze:
            name = c.g.squeeze(name, [dim])
        c.g.output(r, name)


@register("split", "split_with_sizes", "chunk", "tensor_split", "unbind", "hsplit", "vsplit")
def _split(c):
    x = c.arg(0)
    results = list(c.result)
    if c.op == "unbind":
        dim = int(c.arg(1, "dim", 0)) % x.dim()
        _split_outputs(c, x, dim, results, squeeze=True)
        return
    default_dim = {"hsplit": 1 if x.dim() > 1 else 0, "vsplit": 0}.get(c.op, 0)
    dim = int(c.arg(2, "dim", default_dim)) % x.dim()
    _split_outputs(c, x, dim, results)


@register("select")
def _select(c):
    x, dim, index = c.arg(0), int(c.arg(1, "dim")), int(c.arg(2, "index"))
    dim %= x.dim()
    c.out(c.g.node("Gather", [tensor_name(c.g, x), c.g.constant(np.asarray(index, np.int64))],
                   axis=dim))


@register("narrow")
def _narrow(c):
    x, dim, start, length = c.arg(0), int(c.arg(1, "dim")), c.arg(2, "start"), int(c.arg(3))
    start = int(start)
    dim %= x.dim()
    if start < 0:
        start += x.shape[dim]
    g = c.g
    c.out(g.slice(tensor_name(g, x), [start], [start + length], [dim]))


@register("index_select")
def _index_select(c):
    x, dim, index = c.arg(0), int(c.arg(1, "dim")), c.arg(2, "index")
    c.out(c.g.node("Gather", [tensor_name(c.g, x), operand(c.g, index, ember.int64)],
                   axis=dim % max(x.dim(), 1)))


@register("gather", "take_along_dim")
def _gather(c):
    x, dim, index = c.arg(0), c.arg(1, "dim"), c.arg(2, "index")
    c.g.require(11, c.op)
    if c.op == "take_along_dim":
        index, dim = c.arg(1, "indices"), c.arg(2, "dim")
    c.out(c.g.node("GatherElements", [tensor_name(c.g, x), operand(c.g, index, ember.int64)],
                   axis=int(dim) % x.dim()))


@register("embedding")
def _embedding(c):
    # ember._C._nn.embedding(input, weight, ...) and F.embedding(input, weight, ...)
    a, b = c.arg(0), c.arg(1)
    indices, weight = (a, b) if a.dtype in (ember.int64, ember.int32) else (b, a)
    c.out(c.g.node("Gather", [tensor_name(c.g, weight), tensor_name(c.g, indices)], axis=0))


@register("__getitem__")
def _getitem(c):
    x, index = c.arg(0), c.arg(1)
    g = c.g
    if not isinstance(index, tuple):
        index = (index,)
    name = tensor_name(g, x)
    # Expand the Ellipsis into full slices.
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis and not (
        _is_tensor(i) and i.dtype == ember.bool))
    items = []
    for i in index:
        if i is Ellipsis:
            items += [slice(None)] * (x.dim() - consumed)
        else:
            items.append(i)
    dim = 0
    unsqueeze_at = []
    gathers = []
    starts, ends, axes, steps = [], [], [], []
    out_dim = 0
    for item in items:
        if item is None:
            unsqueeze_at.append(out_dim)
            out_dim += 1
            continue
        if isinstance(item, slice):
            start = 0 if item.start is None else int(item.start)
            stop = INT64_MAX if item.stop is None else int(item.stop)
            step = 1 if item.step is None else int(item.step)
            if (start, stop, step) != (0, INT64_MAX, 1):
                starts.append(start)
                ends.append(stop)
                axes.append(dim)
                steps.append(step)
            dim += 1
            out_dim += 1
            continue
        if isinstance(item, (int, np.integer)) or (_is_tensor(item) and item.dim() == 0 and
                                                   not g.is_traced(item) and
                                                   not item.is_floating_point()):
            gathers.append((dim, int(item), False))
            dim += 1
            continue
        if _is_tensor(item) and item.dtype != ember.bool:
            gathers.append((dim, item, True))
            dim += 1
            out_dim += item.dim()
            continue
        c.fail(f"with index {type(item).__name__} (boolean masks give data-dependent shapes) "
               "has no ONNX form here")
    if starts:
        name = g.slice(name, starts, ends, axes, steps)
    # Gather from the last indexed dim backwards, so earlier dims keep their positions.
    tensor_gathers = [gi for gi in gathers if gi[2]]
    if len(tensor_gathers) > 1:
        c.fail("with several tensor indices (advanced indexing) has no ONNX form here")
    for d, idx, is_tensor_index in sorted(gathers, key=lambda t: -t[0]):
        index_name = operand(g, idx, ember.int64) if is_tensor_index else \
            g.constant(np.asarray(idx, np.int64))
        name = g.node("Gather", [name, index_name], axis=d)
    if unsqueeze_at:
        name = g.unsqueeze(name, unsqueeze_at)
    if tuple(c.result.shape) != tuple(_shape_after(x, items)) and not g.dynamic_sizes:
        name = g.node("Reshape", [name, g.ints(list(c.result.shape))])
    c.out(name)


def _shape_after(x, items):
    """The shape basic indexing gives (for a check; advanced indexing may reorder dims)."""
    return list(np.empty(tuple(x.shape), dtype=np.bool_)[tuple(
        i if not _is_tensor(i) else i.numpy() for i in items)].shape)


@register("tril", "triu")
def _trilu(c):
    c.g.require(14, c.op)
    x, k = c.arg(0), int(c.arg(1, "diagonal", 0))
    c.out(c.g.node("Trilu", [tensor_name(c.g, x), c.g.constant(np.asarray(k, np.int64))],
                   upper=int(c.op == "triu")))


@register("flip")
def _flip(c):
    x, dims = c.arg(0), _dims(c.arg(1, "dims"), c.arg(0).dim())
    c.out(c.g.slice(tensor_name(c.g, x), [-1] * len(dims), [-INT64_MAX] * len(dims), dims,
                    [-1] * len(dims)))


FACTORIES = {"zeros": 0, "ones": 1, "empty": 0, "full": None}


def factory(g, op, args, names, result):
    """zeros/ones/empty/full whose size follows a dynamic axis: a ConstantOfShape whose shape
    reads that axis from the graph input it came from."""
    from onnx import helper

    from ember.onnx._graph import onnx_type

    probe = g.current_probe.get(id(result))
    parts = []
    for i, d in enumerate(result.shape):
        d = int(d)
        dynamic = d != probe[i] if probe is not None else d in g.dynamic_sources
        if not dynamic:
            parts.append(g.ints([d]))
            continue
        piece = g.dynamic_dim(d, probe[i]) if probe is not None else None
        if piece is None and d in g.dynamic_sources:
            input_name, axis = g.dynamic_sources[d]
            piece = g.slice(g.node("Shape", [input_name]), [axis], [axis + 1], [0])
        if piece is None:
            raise UnsupportedOperatorError(
                f"onnx.export: {op}{tuple(result.shape)}: size {d} follows a dynamic axis but "
                "no traced tensor has it; pass the size through a tensor op (zeros_like, ...)")
        parts.append(piece)
    shape = g.node("Concat", parts, axis=0) if len(parts) > 1 else parts[0]
    value = FACTORIES[op]
    if value is None:
        value = args[names.index("fill_value")] if "fill_value" in names else args[1]
    tensor = helper.make_tensor("value", onnx_type(result.dtype), [1], [value])
    g.output(result, g.node("ConstantOfShape", [shape], value=tensor))


@register("zeros_like", "ones_like", "full_like", "empty_like")
def _full_like(c):
    x = c.arg(0)
    g = c.g
    value = {"zeros_like": 0, "ones_like": 1, "empty_like": 0}.get(c.op)
    if value is None:
        value = c.arg(1, "fill_value")
    dtype = c.result.dtype
    from onnx import helper

    from ember.onnx._graph import onnx_type

    tensor = helper.make_tensor("value", onnx_type(dtype), [1], [value])
    c.out(g.node("ConstantOfShape", [g.node("Shape", [tensor_name(g, x)])], value=tensor))


# -- reductions --------------------------------------------------------------------------------
def _reduce(onnx_op):
    def emit(c):
        x = c.arg(0)
        dim = c.arg(1, "dim")
        keepdim = bool(c.arg(2, "keepdim", False))
        dtype = c.result.dtype if _is_tensor(c.result) else x.dtype
        name = operand(c.g, x, dtype)
        axes = None if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0) \
            else _dims(dim, max(x.dim(), 1))
        c.out(c.g.reduce(onnx_op, name, axes, keepdim))

    return emit


register("sum", "nansum")(_reduce("ReduceSum"))
register("mean", "nanmean")(_reduce("ReduceMean"))
register("amax")(_reduce("ReduceMax"))
register("amin")(_reduce("ReduceMin"))
register("logsumexp")(_reduce("ReduceLogSumExp"))


@register("all", "any")
def _all_any(c):
    """all/any as a min/max of the values as 0/1 (Reduce* have no bool form)."""
    x, dim = c.arg(0), c.arg(1, "dim")
    keepdim = bool(c.arg(2, "keepdim", False))
    g = c.g
    as_int = g.node("Cast", [tensor_name(g, x)], to=6)  # int32
    as_bool = g.node("Cast", [as_int], to=9)  # nonzero -> True
    as_int = g.node("Cast", [as_bool], to=6)
    axes = None if dim is None else _dims(dim, max(x.dim(), 1))
    reduced = g.reduce("ReduceMin" if c.op == "all" else "ReduceMax", as_int, axes, keepdim)
    c.out(g.node("Cast", [reduced], to=9))


@register("prod")
def _prod(c):
    x, dim = c.arg(0), c.arg(1, "dim")
    keepdim = bool(c.arg(2, "keepdim", False))
    name = operand(c.g, x, c.result.dtype)
    c.out(c.g.reduce("ReduceProd", name, None if dim is None else _dims(dim, x.dim()), keepdim))


def _extremum(reduce_op, arg_op, binary_op):
    def emit(c):
        x, other = c.arg(0), c.arg(1)
        g = c.g
        if _is_tensor(other):
            dtype = c.result.dtype
            c.out(g.node(binary_op, [operand(g, x, dtype), operand(g, other, dtype)]))
            return
        if other is None:
            c.out(g.reduce(reduce_op, tensor_name(g, x), None, False))
            return
        dim = int(other) % max(x.dim(), 1)
        keepdim = bool(c.arg(2, "keepdim", False))
        values, indices = c.result[0], c.result[1]
        g.output(values, g.reduce(reduce_op, tensor_name(g, x), [dim], keepdim))
        g.output(indices, g.node(arg_op, [tensor_name(g, x)], axis=dim, keepdims=int(keepdim)))

    return emit


register("max")(_extremum("ReduceMax", "ArgMax", "Max"))
register("min")(_extremum("ReduceMin", "ArgMin", "Min"))


def _arg(onnx_op):
    def emit(c):
        x, dim = c.arg(0), c.arg(1, "dim")
        keepdim = bool(c.arg(2, "keepdim", False))
        g = c.g
        name = tensor_name(g, x)
        if dim is None:
            name = g.node("Reshape", [name, g.ints([-1])])
            dim = 0
        c.out(g.node(onnx_op, [name], axis=int(dim) % max(x.dim(), 1), keepdims=int(keepdim)))

    return emit


register("argmax")(_arg("ArgMax"))
register("argmin")(_arg("ArgMin"))


@register("var", "std")
def _var(c):
    x = c.arg(0)
    g = c.g
    dim = c.arg(1, "dim")
    correction = c.arg(None, "correction")
    unbiased = c.arg(None, "unbiased")
    keepdim = bool(c.arg(None, "keepdim", False))
    if isinstance(dim, bool):  # var(x, unbiased)
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes = None if dim is None else _dims(dim, x.dim())
    count = x.numel() if axes is None else int(np.prod([x.shape[a] for a in axes]))
    name = tensor_name(g, x)
    mean = g.reduce("ReduceMean", name, axes, True)
    diff = g.node("Sub", [name, mean])
    sq = g.reduce("ReduceMean", g.node("Mul", [diff, diff]), axes, keepdim)
    factor = count / max(count - correction, 1)
    var = g.node("Mul", [sq, g.scalar(factor, x.dtype)])
    c.out(g.node("Sqrt", [var]) if c.op == "std" else var)


@register("cumsum")
def _cumsum(c):
    x, dim = c.arg(0), int(c.arg(1, "dim"))
    dtype = c.result.dtype
    c.g.require(11, "cumsum")
    c.out(c.g.node("CumSum", [operand(c.g, x, dtype), c.g.constant(np.asarray(dim, np.int64))]))


@register("topk")
def _topk(c):
    x, k = c.arg(0), int(c.arg(1, "k"))
    dim = int(c.arg(2, "dim", -1)) % max(x.dim(), 1)
    largest = bool(c.arg(3, "largest", True))
    g = c.g
    if g.opset < 11 and not largest:
        g.require(11, "topk(largest=False)")
    if g.opset < 10:
        values, indices = g.node("TopK", [tensor_name(g, x)], outputs=2, axis=dim, k=k)
    elif g.opset < 11:
        values, indices = g.node("TopK", [tensor_name(g, x), g.ints([k])], outputs=2, axis=dim)
    else:
        values, indices = g.node("TopK", [tensor_name(g, x), g.ints([k])], outputs=2,
                                 axis=dim, largest=int(largest), sorted=1)
    c.g.output(c.result[0], values)
    c.g.output(c.result[1], indices)


@register("norm")
def _norm(c):
    x, p, dim = c.arg(0), c.arg(1, "p", 2), c.arg(2, "dim")
    keepdim = bool(c.arg(3, "keepdim", False))
    if p in (None, "fro"):
        p = 2
    ops = {1: "ReduceL1", 2: "ReduceL2"}
    if p not in ops:
        c.fail(f"with p={p!r} has no ONNX form here (p=1 and p=2 do)")
    axes = None if dim is None else _dims(dim, x.dim())
    c.out(c.g.reduce(ops[p], tensor_name(c.g, x), axes, keepdim))
