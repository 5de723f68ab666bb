"""Batching rules: how each op runs on batched values (ember.func.vmap).

``handle`` receives every binding call that has a BatchedTensor among its arguments, with the
arguments in the binding's parameter order (``names``) and a capsule to call the same binding
again. It picks the innermost level among the arguments, and applies the op's rule to the real
values of that level, whose batch is dim 0:

- pointwise ops: batched arguments are padded with size-1 dims after the batch so that
  broadcasting lines up, then the op runs once on the whole batch;
- ops with dim arguments (reductions, softmax, views, cat, ...): every dim moves past the batch;
- shape ops (view, reshape, expand, permute, ...) get the batch size prepended;
- matmul, linear and the losses have their own rules;
- queries (shape, dim, size, numel, ...) answer for one sample;
- anything else falls back to a loop over the batch, and is counted in ``FALLBACK_COUNTS`` (the
  ops that fall back are listed in docs/design/forward-ad.md).
"""

from __future__ import annotations

import collections

import ember
from ember._C import _profiler as _hooks
from ember._C._forward_ad import has_tangent as _fw_has_tangent
from ember.func._batched import BatchedTensor, level_info, unwrap, wrap
from ember.func._batched import open_levels as _open_levels

FALLBACK_COUNTS: collections.Counter = collections.Counter()


class _Call:
    """One intercepted call: its arguments by position and name, and the level being peeled."""

    def __init__(self, op, is_method, args, names, kwargs, binding, level):
        self.op, self.is_method, self.binding, self.level = op, is_method, binding, level
        self.args, self.names, self.kwargs = list(args), list(names), dict(kwargs)
        self.batch_size, self.randomness = level_info(level)

    def index(self, *names):
        for n in names:
            if n in self.names:
                return self.names.index(n)
        return None

    def get(self, *names, default=None):
        i = self.index(*names)
        return self.args[i] if i is not None else default

    def invoke(self, args, kwargs=None):
        kwargs = dict(self.kwargs if kwargs is None else kwargs)
        levels = set()
        for a in args:
            _levels_in(a, levels)
        for v in kwargs.values():
            _levels_in(v, levels)
        if levels:  # values of an outer vmap: that level's rule runs next
            return handle(
                self.op, self.is_method, tuple(args), tuple(self.names), kwargs, self.binding
            )
        return _hooks._call_binding(self.binding, tuple(args), kwargs)


def _levels_in(obj, out):
    if isinstance(obj, BatchedTensor):
        out.add(obj._bl)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _levels_in(o, out)
    return out


def _logical_dim(x, level):
    v = unwrap(x, level)
    return v.dim() - 1 if v is not None else x.dim()


def _wrap_dim(d, rank):
    if not isinstance(d, int):
        d = int(d)
    if rank == 0 and d in (0, -1):
        return 0
    if not -rank <= d < rank:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-rank}, "
            f"{rank - 1}], but got {d})"
        )
    return d % rank


def _pad(v, rank):
    """A batched value (batch at 0) with size-1 dims after the batch up to ``rank`` logical dims."""
    missing = rank - (v.dim() - 1)
    if missing <= 0:
        return v
    return v.reshape((v.shape[0],) + (1,) * missing + tuple(v.shape[1:]))


def _materialize(x, call):
    """A value batched at the call's level: x's, or x expanded over the batch."""
    v = unwrap(x, call.level)
    if v is not None:
        return v
    return x.unsqueeze(0).expand((call.batch_size,) + tuple(x.shape))


def _wrap_out(out, level):
    if isinstance(out, ember.Tensor) and not isinstance(out, BatchedTensor):
        return wrap(out, level)
    if isinstance(out, BatchedTensor):
        return wrap(out, level)
    if isinstance(out, tuple):
        return _rebuild_tuple(out, [_wrap_out(o, level) for o in out])
    if isinstance(out, list):
        return [_wrap_out(o, level) for o in out]
    return out


def _rebuild_tuple(like, items):
    if type(like) is tuple:
        return tuple(items)
    if hasattr(type(like), "_make"):  # a namedtuple
        return type(like)._make(items)
    return type(like)(items)  # ember.return_types: built from a sequence


# ---- pointwise ------------------------------------------------------------------------------


def _pointwise(call):
    tensors = [a for a in call.args if isinstance(a, ember.Tensor)]
    tensors += [v for v in call.kwargs.values() if isinstance(v, ember.Tensor)]
    rank = max((_logical_dim(t, call.level) for t in tensors), default=0)
    self_batched = unwrap(call.args[0], call.level) is not None if call.args else False
    inplace = call.op.endswith("_") and not call.op.endswith("__") or call.op.startswith("__i")
    if inplace and not self_batched:
        raise RuntimeError(
            f"vmap: {call.op}(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try "
            "to use out-of-place operators instead of inplace."
        )
    args = []
    for a in call.args:
        v = unwrap(a, call.level) if isinstance(a, ember.Tensor) else None
        args.append(_pad(v, rank) if v is not None else a)
    kwargs = {
        k: (_pad(unwrap(v, call.level), rank) if unwrap(v, call.level) is not None else v)
        for k, v in call.kwargs.items()
    }
    out = call.invoke(args, kwargs)
    if inplace:
        return call.args[0]
    return _wrap_out(out, call.level)


# ---- dims -----------------------------------------------------------------------------------

_DIM_NAMES = (
    "dim",
    "dims",
    "dim0",
    "dim1",
    "dim2",
    "start_dim",
    "end_dim",
    "axis",
    "axis0",
    "axis1",
    "source",
    "destination",
)
# Ops whose dim=None means "every dim": the rule passes the sample's dims explicitly.
_FULL_REDUCTIONS = {
    "sum",
    "mean",
    "nansum",
    "nanmean",
    "amax",
    "amin",
    "prod",
    "logsumexp",
    "std",
    "var",
    "all",
    "any",
    "count_nonzero",
    "norm",
    "std_mean",
    "var_mean",
    "aminmax",
    "max",
    "min",
    "argmax",
    "argmin",
    "median",
    "nanmedian",
}
# Ops that add a dim: a dim of the result, which has one more.
_ADDS_DIM = {"unsqueeze", "stack"}


def _dim_op(call):
    x = call.args[0] if call.args else None
    tensors_arg = isinstance(x, (list, tuple))
    rank = _logical_dim(x[0], call.level) if tensors_arg else _logical_dim(x, call.level)
    if call.op in _ADDS_DIM:
        rank += 1
    args = list(call.args)
    found_dim = False
    for name in _DIM_NAMES:
        i = call.index(name)
        if i is None:
            continue
        d = args[i]
        if d is None:
            continue
        found_dim = True
        if isinstance(d, (list, tuple)):
            args[i] = type(d)(_wrap_dim(e, rank) + 1 for e in d)
        elif isinstance(d, int) and not isinstance(d, bool):
            args[i] = (
                _wrap_dim(d, max(rank, 1) if call.op not in ("flatten",) else max(rank, 1)) + 1
            )
    if (
        not found_dim
        and call.op in ("flip", "permute")
        and len(args) > 1
        and isinstance(args[1], tuple)
    ):
        # A method taking the dims as varargs (a tuple, unnamed): x.flip(0, 1), x.flip((0, 1)).
        i = 1
        dims = args[i]
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = dims[0]
        args[i] = tuple(_wrap_dim(d, rank) + 1 for d in dims)
        found_dim = True
    if not found_dim and call.op not in _FULL_REDUCTIONS:
        # Every rule below needs to know the dims; without them, the per-sample loop is right.
        if call.op not in (
            "squeeze",
            "flatten",
            "cat",
            "concat",
            "concatenate",
            "stack",
            "unbind",
            "diagonal",
            "diff",
            "sort",
            "argsort",
            "cumsum",
        ):
            return _fallback(call)
    if call.op == "squeeze" and not found_dim:
        v = unwrap(x, call.level)
        dims = tuple(d + 1 for d in range(rank) if v.shape[d + 1] == 1)
        return wrap(v.squeeze(dims) if dims else v, call.level)
    if not found_dim and call.op in _FULL_REDUCTIONS and not tensors_arg:
        v = unwrap(x, call.level)
        if call.op in ("argmax", "argmin", "median", "nanmedian", "max", "min", "aminmax"):
            # Over the flattened sample.
            flat = v.reshape(v.shape[0], -1)
            sub = list(args)
            sub[0] = flat
            i = call.index("dim")
            if i is None:
                return _fallback(call)
            sub[i] = 1
            return _wrap_out(call.invoke(sub), call.level)
        i = call.index("dim")
        if i is None:
            return _fallback(call)
        args[i] = tuple(range(1, rank + 1)) if rank else ()
        if rank == 0:
            return _wrap_out(unwrap(x, call.level).clone(), call.level)
    if tensors_arg:
        args[0] = type(x)(_materialize(t, call) for t in x)
    else:
        args[0] = unwrap(x, call.level) if unwrap(x, call.level) is not None else x
    for j in range(1, len(args)):  # other tensors (an index for gather, ...)
        a = args[j]
        if isinstance(a, BatchedTensor) and a._bl == call.level:
            args[j] = a._bv
        elif isinstance(a, ember.Tensor) and j in _batched_positions(call):
            args[j] = _materialize(a, call)
    if any(isinstance(a, BatchedTensor) and a._bl == call.level for a in args):
        return _fallback(call)
    out = call.invoke(args)
    if call.op.endswith("_") and not call.op.endswith("__"):
        return call.args[0]
    return _wrap_out(out, call.level)


def _batched_positions(call):
    """Positions of tensor arguments that must carry the batch because another one does."""
    out = set()
    if any(unwrap(a, call.level) is not None for a in call.args[1:] if isinstance(a, ember.Tensor)):
        out = {j for j, a in enumerate(call.args) if isinstance(a, ember.Tensor)}
    return out


# ---- shapes ---------------------------------------------------------------------------------


def _shape_arg(call):
    i = call.index("size", "shape", "sizes")
    if i is None and len(call.args) > 1 and call.names[1] == "" and isinstance(call.args[1], tuple):
        # varargs (x.reshape(2, 3) or x.reshape((2, 3))): give the rule the shape itself
        shape = call.args[1]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return -1, tuple(int(e) for e in shape)
    if i is None:
        return None, None
    s = call.args[i]
    if isinstance(s, ember.Size) or isinstance(s, (list, tuple)):
        return i, tuple(int(e) for e in s)
    if isinstance(s, int):
        return i, (s,)
    return i, None


def _reshape_like(call):
    v = unwrap(call.args[0], call.level)
    if v is None:
        return _fallback(call)
    args = list(call.args)
    if call.op in ("view_as", "reshape_as", "expand_as"):
        other = call.args[1]
        shape = tuple(other.shape)
        op = {"view_as": v.view, "reshape_as": v.reshape, "expand_as": None}[call.op]
        if op is None:
            return _expand(v, shape, call)
        return wrap(op((v.shape[0],) + shape), call.level)
    i, shape = _shape_arg(call)
    if shape is None:
        # varargs form: (*shape) in the remaining positional args
        shape = tuple(int(a) for a in call.args[1:] if isinstance(a, int))
        if not shape and len(call.args) > 1 and isinstance(call.args[1], (tuple, list)):
            shape = tuple(call.args[1])
        if call.op in ("view", "reshape"):
            return wrap(getattr(v, call.op)((v.shape[0],) + shape), call.level)
        if call.op == "expand":
            return _expand(v, shape, call)
        return _fallback(call)
    if call.op == "expand":
        return _expand(v, shape, call)
    if i == -1:
        return wrap(getattr(v, call.op)((v.shape[0],) + shape), call.level)
    args[0] = v
    args[i] = (v.shape[0],) + shape
    return _wrap_out(call.invoke(args), call.level)


def _expand(v, shape, call):
    logical = tuple(v.shape[1:])
    extra = len(shape) - len(logical)
    if extra < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({len(logical)})"
        )
    v = v.reshape((v.shape[0],) + (1,) * extra + logical)
    return wrap(v.expand((v.shape[0],) + tuple(shape)), call.level)


def _permute(call):
    v = unwrap(call.args[0], call.level)
    rank = v.dim() - 1
    dims = call.args[1] if len(call.args) > 1 else call.get("dims")
    if isinstance(dims, int):
        dims = tuple(a for a in call.args[1:] if isinstance(a, int))
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):  # x.permute([1, 0])
        dims = dims[0]
    dims = tuple(_wrap_dim(d, rank) + 1 for d in dims)
    return wrap(v.permute((0,) + dims), call.level)


def _matrix_t(call):
    v = unwrap(call.args[0], call.level)
    rank = v.dim() - 1
    if call.op in ("t", "T") and rank < 2:
        return wrap(v, call.level)
    if call.op in ("T",) and rank > 2:
        return wrap(v.permute((0,) + tuple(range(rank, 0, -1))), call.level)
    return wrap(v.transpose(-1, -2), call.level)


def _getitem(call):
    v = unwrap(call.args[0], call.level)
    idx = call.args[1]
    if not isinstance(idx, tuple):
        idx = (idx,)
    if v is None or any(isinstance(i, BatchedTensor) and i._bl == call.level for i in idx):
        return _fallback(call)
    return wrap(v[(slice(None),) + idx], call.level)


def _setitem(call):
    v = unwrap(call.args[0], call.level)
    idx, value = call.args[1], call.args[2]
    if v is None:
        raise RuntimeError(
            "vmap: index_put_ / __setitem__ with a vmapped value into a tensor that "
            "is not vmapped over is not possible; create the target inside the "
            "vmapped function (e.g. with zeros_like of a batched input)."
        )
    if not isinstance(idx, tuple):
        idx = (idx,)
    if any(isinstance(i, BatchedTensor) and i._bl == call.level for i in idx):
        return _fallback(call)
    region = v[(slice(None),) + idx]
    vv = unwrap(value, call.level) if isinstance(value, ember.Tensor) else None
    if vv is not None:
        value = _pad(vv, region.dim() - 1)
    v[(slice(None),) + idx] = value
    return None


# ---- queries --------------------------------------------------------------------------------


def _query(call):
    x = call.args[0]
    v = unwrap(x, call.level)
    op = call.op
    if op == "shape":
        return ember.Size(tuple(v.shape[1:]))
    if op == "size":
        d = call.args[1] if len(call.args) > 1 else None
        if d is None:
            return ember.Size(tuple(v.shape[1:]))
        return v.shape[1:][_wrap_dim(d, v.dim() - 1)]
    if op in ("dim", "ndimension", "ndim"):
        return v.dim() - 1
    if op in ("numel", "nelement"):
        return (
            v.numel() // max(v.shape[0], 1)
            if v.shape[0]
            else int(ember.Size(tuple(v.shape[1:])).numel())
        )
    if op == "__len__":
        if v.dim() == 1:
            raise TypeError("len() of a 0-d tensor")
        return v.shape[1]
    if op in (
        "dtype",
        "device",
        "is_floating_point",
        "is_complex",
        "is_cuda",
        "layout",
        "requires_grad",
        "is_leaf",
        "grad_fn",
        "is_quantized",
        "is_sparse",
        "element_size",
        "itemsize",
        "is_signed",
        "is_meta",
        "is_inference",
        "_is_view",
    ):
        attr = getattr(v, op)
        return attr() if callable(attr) else attr
    if op == "has_tangent":
        return _fw_has_tangent(v)
    if op in ("is_contiguous",):
        return True
    if op in ("stride",):
        return (
            v.stride()[1:]
            if len(call.args) < 2 or call.args[1] is None
            else v.stride(_wrap_dim(call.args[1], v.dim() - 1) + 1)
        )
    raise AssertionError(op)


_QUERIES = {
    "has_tangent",
    "shape",
    "size",
    "dim",
    "ndimension",
    "ndim",
    "numel",
    "nelement",
    "__len__",
    "dtype",
    "device",
    "is_floating_point",
    "is_complex",
    "is_cuda",
    "layout",
    "requires_grad",
    "is_leaf",
    "grad_fn",
    "is_quantized",
    "is_sparse",
    "element_size",
    "itemsize",
    "is_signed",
    "is_meta",
    "is_inference",
    "_is_view",
    "is_contiguous",
    "stride",
}

_DATA_DEPENDENT = {
    "item",
    "tolist",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "numpy",
    "__complex__",
    "nonzero",
    "unique",
    "masked_select",
    "argwhere",
}


def _data_dependent(call):
    raise RuntimeError(
        f"vmap: It looks like you're calling {call.op} on a batched Tensor inside vmap. This is "
        "a data-dependent operation and vmap cannot batch it: the result would differ across "
        "the batch. Please rewrite the function without it, or move it out of vmap."
    )


# ---- randomness -----------------------------------------------------------------------------

_RANDOM = {
    "dropout",
    "dropout_",
    "bernoulli",
    "bernoulli_",
    "rand_like",
    "randn_like",
    "randint_like",
    "multinomial",
    "normal",
    "normal_",
    "uniform_",
    "random_",
    "exponential_",
    "feature_alpha_dropout",
    "alpha_dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "rrelu",
    "poisson",
    "_standard_gamma",
    "binomial",
    "_sample_dirichlet",
    "cauchy_",
    "log_normal_",
    "geometric_",
}


# Random ops that take no tensor to batch over: the binding hook sends these (and every op of
# _RANDOM) to the handler while a vmap runs even when no argument is batched.
_RANDOM_FACTORIES = {"rand", "randn", "randint", "randperm"}
RANDOM_OPS = frozenset(_RANDOM | _RANDOM_FACTORIES)

_DROPOUTS = {
    "dropout",
    "dropout_",
    "feature_dropout",
    "feature_dropout_",
    "alpha_dropout",
    "alpha_dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
}


def _draws_nothing(call):
    """A dropout in eval mode or with p = 0 returns its input: it is not random (PyTorch's
    vmap lets it through in every randomness mode)."""
    if call.op not in _DROPOUTS:
        return False
    p = call.get("p", default=0.5)
    train = call.get("train", "training", default=True)
    return not train or float(p) == 0.0


def _randomness_error():
    return RuntimeError(
        "vmap: called random operation while in randomness error mode. Please either use "
        "the 'same' or 'different' randomness flags on vmap or perform the randomness "
        "operation out of vmap"
    )


def _unbatched_random(op, args, names, kwargs, binding):
    """A random op with no batched argument inside vmap (randn(3), x.normal_() on a tensor made
    inside the function): 'error' raises, 'same' draws once for every sample, 'different' draws
    once per sample of each enclosing 'different' level and returns the draws batched."""
    levels = _open_levels()
    if not levels:  # another thread's vmap installed the hook
        return _hooks._call_binding(binding, tuple(args), kwargs)
    call = _Call(op, False, args, names, kwargs, binding, levels[-1][0])
    if _draws_nothing(call):
        return _hooks._call_binding(binding, tuple(args), kwargs)
    if any(r == "error" for _, _, r in levels):
        raise _randomness_error()
    different = [(lvl, size) for lvl, size, r in levels if r == "different"]
    if not different:
        return _hooks._call_binding(binding, tuple(args), kwargs)
    if op.endswith("_"):
        raise RuntimeError(
            f"vmap: {op}: an in-place random op on a tensor that is not batched cannot draw "
            "'different' values per sample; make the tensor from a batched input (e.g. "
            "ember.empty_like(x)), or use randomness='same'"
        )
    count = 1
    for _, size in different:
        count *= size
    draws = [_hooks._call_binding(binding, tuple(args), dict(kwargs)) for _ in range(count)]
    value = ember.stack(draws).reshape(tuple(size for _, size in different) + tuple(draws[0].shape))
    for lvl, _ in different:  # the outermost level's batch dim first
        value = wrap(value, lvl)
    return value


def _random(call):
    if _draws_nothing(call):
        return call.args[call.index("input", "self") or 0]
    if call.randomness == "error":
        raise _randomness_error()
    if call.randomness == "different":
        return _pointwise(call)
    # 'same': draw for one sample and apply the same draw to every sample.
    if call.op.startswith("dropout") or call.op in ("feature_alpha_dropout", "alpha_dropout"):
        v = unwrap(call.args[0], call.level)
        args = list(call.args)
        args[0] = ember.ones(tuple(v.shape[1:]), dtype=v.dtype)
        mask = call.invoke(args)
        return wrap(v * mask, call.level)
    return _fallback_same(call)


def _fallback_same(call):
    v = unwrap(call.args[0], call.level)
    args = list(call.args)
    args[0] = v[0]
    one = call.invoke(args)
    return wrap(one.unsqueeze(0).expand((v.shape[0],) + tuple(one.shape)).contiguous(), call.level)


# ---- fallback -------------------------------------------------------------------------------


def _fallback(call):
    """Runs the op once per sample and stacks the results."""
    FALLBACK_COUNTS[call.op] += 1
    bsz = call.batch_size
    results = []
    for i in range(bsz):
        args = [_slice(a, call.level, i) for a in call.args]
        kwargs = {k: _slice(v, call.level, i) for k, v in call.kwargs.items()}
        results.append(call.invoke(args, kwargs))
    if call.op.endswith("_") and not call.op.endswith("__"):
        return call.args[0]
    first = results[0]
    if isinstance(first, ember.Tensor):
        return wrap(ember.stack(results), call.level)
    if (
        isinstance(first, (tuple, list))
        and first
        and all(isinstance(r, ember.Tensor) for r in first)
    ):
        stacked = [
            wrap(ember.stack([r[j] for r in results]), call.level) for j in range(len(first))
        ]
        return stacked if isinstance(first, list) else _rebuild_tuple(first, stacked)
    if first is None:
        return None
    return _data_dependent(call)


def _slice(a, level, i):
    v = unwrap(a, level) if isinstance(a, ember.Tensor) else None
    if v is not None:
        return v[i]
    if isinstance(a, (list, tuple)) and any(
        isinstance(x, BatchedTensor) and x._bl == level for x in a
    ):
        return type(a)(_slice(x, level, i) for x in a)
    return a


# ---- the table ------------------------------------------------------------------------------

_POINTWISE = set(
    """
abs absolute acos acosh add addcdiv addcmul angle asin asinh atan atan2 atanh bitwise_and
bitwise_not bitwise_or bitwise_xor ceil clamp clamp_max clamp_min clip conj conj_physical copysign
cos cosh deg2rad digamma div divide eq erf erfc erfinv exp exp2 expm1 float_power floor
floor_divide fmax fmin fmod frac ge gt heaviside hypot i0 igamma igammac imag isfinite isinf
isnan isneginf isposinf isreal ldexp le lerp lgamma log log10 log1p log2 logaddexp logaddexp2
logical_and logical_not logical_or logical_xor logit lt maximum minimum mul multiply mvlgamma
nan_to_num ne neg negative nextafter polygamma positive pow rad2deg real reciprocal remainder
round rsqrt sgn sigmoid sign signbit sin sinc sinh sqrt square sub subtract tan tanh true_divide
trunc where _where xlogy relu layer_norm rms_norm embedding relu6 gelu silu mish elu selu celu
leaky_relu hardtanh hardsigmoid
hardswish hardshrink softshrink tanhshrink softplus logsigmoid threshold prelu glu_ clone
detach contiguous to type float double half bfloat16 int long bool short char byte cfloat
cdouble zeros_like ones_like empty_like full_like fill_ zero_ copy_ masked_fill requires_grad_
detach_ __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__
__floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __eq__
__ne__ __lt__ __le__ __gt__ __ge__ __and__ __or__ __xor__ __invert__ __iadd__ __isub__ __imul__
__itruediv__ __ipow__ __matmul_elementwise_unused__ rsub special_expit special_erfcx
special_ndtr special_log_ndtr special_i0e special_i1 special_i1e special_entr
special_xlog1py special_ndtri arccos arccosh arcsin arcsinh arctan arctan2 arctanh airy_ai
bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0
chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w
shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l
legendre_polynomial_p erfcx entr i0e i1 i1e ndtr ndtri log_ndtr xlog1py zeta gammainc gammaincc
bitwise_left_shift bitwise_right_shift __lshift__ __rshift__ __rlshift__ __rrshift__ __rand__
__ror__ __rxor__ __iand__ __ior__ __ixor__ __imod__ __ifloordiv__ __ilshift__ __irshift__
add_relu
""".split()
)
for _n in list(_POINTWISE):
    if not _n.startswith("__") and not _n.endswith("_"):
        _POINTWISE.add(_n + "_")

_DIM_OPS = set(
    """
sum mean nansum nanmean amax amin prod logsumexp std var all any count_nonzero norm std_mean
var_mean aminmax max min argmax argmin median nanmedian softmax log_softmax softmin cumsum
cumprod cummax cummin logcumsumexp unsqueeze squeeze transpose swapaxes swapdims movedim
moveaxis narrow select index_select flip roll flatten unflatten cat concat concatenate stack
unbind split chunk tensor_split sort argsort topk kthvalue mode diagonal diff gather
take_along_dim layer_norm_unused renorm normalize
""".split()
)

# Per-sample ops over (N, C, *spatial): the batch folds into N.
_SPATIAL = {
    f"{kind}{d}d"
    for d in (1, 2, 3)
    for kind in (
        "conv",
        "conv_transpose",
        "max_pool",
        "avg_pool",
        "adaptive_avg_pool",
        "adaptive_max_pool",
        "lp_pool",
        "fractional_max_pool_unused",
    )
} | {f"max_pool{d}d_with_indices" for d in (1, 2, 3)}
_SHAPE_OPS = {"view", "reshape", "expand", "view_as", "reshape_as", "expand_as"}
_MATMUL = {"matmul", "__matmul__", "mm", "bmm", "mv", "dot"}
_LOSSES_ELEMENTWISE = {
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "soft_margin_loss",
    "kl_div",
    "poisson_nll_loss",
}
_LOSSES_NLL = {"cross_entropy", "cross_entropy_loss", "nll_loss", "nll_loss_nd"}


def _rmatmul(call):
    call.args = [call.args[1], call.args[0]]
    return _rules_nn._matmul(call)


def rule_for(op):
    """The batching rule of the binding named ``op`` (``_fallback``: none, the per-sample loop)."""
    by_name = {
        "__rmatmul__": _rmatmul,
        "linear": _rules_nn._linear,
        "permute": _permute,
        "__getitem__": _getitem,
        "__setitem__": _setitem,
        "make_dual": _rules_nn._make_dual,
        "unpack_dual": _rules_nn._unpack_dual,
        "run_backward": _rules_nn._run_backward,
        "broadcast_tensors": _rules_nn._broadcast_tensors,
    }
    if op in by_name:
        return by_name[op]
    for ops, rule in (
        (_QUERIES, _query),
        (_DATA_DEPENDENT, _data_dependent),
        (_RANDOM, _random),
        (_MATMUL, _rules_nn._matmul),
        (_SHAPE_OPS, _reshape_like),
        ({"t", "T", "mT", "mH", "H", "adjoint"}, _matrix_t),
        (_LOSSES_NLL, _rules_nn._nll_like),
        (_LOSSES_ELEMENTWISE, _rules_nn._elementwise_loss),
        (_SPATIAL, _rules_nn._spatial),
        (_POINTWISE, _pointwise),
        (_DIM_OPS, _dim_op),
    ):
        if op in ops:
            return rule
    return _fallback


def handle(op, is_method, args, names, kwargs, binding):
    levels = set()
    for a in args:
        _levels_in(a, levels)
    for v in kwargs.values():
        _levels_in(v, levels)
    if not levels:  # only random ops come here without a batched argument
        return _unbatched_random(op, args, names, kwargs, binding)
    call = _Call(op, is_method, args, names, kwargs, binding, max(levels))
    return rule_for(op)(call)


from ember.func import _rules_nn  # noqa: E402  (its rules use the helpers above)
