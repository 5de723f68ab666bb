"""Function transforms (``torch.func``): grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, linearize, vmap, functional_call and stack_module_state.

They are built on Ember's two AD modes: reverse mode (the autograd engine) and forward mode
(``ember.autograd.forward_ad``), so they compose: ``jacfwd(jacrev(f))`` runs forward mode over
the reverse-mode graph, ``grad(grad(f))`` reverse over reverse. An argument that an outer
transform differentiates is aliased, not detached, so that the inner result stays
differentiable for the outer one. ``vmap`` runs batching rules on the whole batch
(ember/func/_rules.py); see docs/design/vmap.md.
"""

from __future__ import annotations

import functools

import ember
from ember._C import _forward_ad as _fw
from ember.autograd import forward_ad as _fwad
from ember.func import _batched
from ember.func._functional_call import functional_call, stack_module_state
from ember.func._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
    "vmap",
    "functional_call",
    "stack_module_state",
]


def _flatten(tree):
    """Leaves of nested tuples/lists/dicts, and a function that rebuilds the structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]
        counts = [len(p[0]) for p in parts]

        def unflatten(values, _parts=parts, _counts=counts, _type=type(tree)):
            out, i = [], 0
            for (_, rebuild), n in zip(_parts, _counts):
                out.append(rebuild(values[i : i + n]))
                i += n
            return _type(out) if _type in (tuple, list) else _type(*out)

        return leaves, unflatten
    if isinstance(tree, dict):
        keys = list(tree)
        vals, rebuild = _flatten([tree[k] for k in keys])
        return vals, lambda values: dict(zip(keys, rebuild(values)))
    return [tree], lambda values: values[0]


def _tracked(t) -> bool:
    """Whether an outer transform (or the caller) differentiates ``t``."""
    return isinstance(t, ember.Tensor) and (t.requires_grad or _fw.has_tangent(t))


def _differentiable_input(t, fn_name):
    if not isinstance(t, ember.Tensor):
        raise TypeError(
            f"{fn_name}: expected the differentiated argument to be a Tensor (or a "
            f"tuple/list/dict of Tensors), got {type(t).__name__}"
        )
    if not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError(
            f"{fn_name}: only Tensors of floating point or complex dtype can be "
            f"differentiated, got {t.dtype}"
        )
    if _tracked(t):
        alias = t.view_as(t)  # keeps the outer graph and tangents
        return alias if alias.requires_grad else alias.requires_grad_()
    return t.detach().requires_grad_()


def _normalize_argnums(argnums, nargs, fn_name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{fn_name}: argnums must be non-empty")
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{fn_name}: argnums must be int or Tuple[int, ...], got {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{fn_name}: Got argnums={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    return single, tuple(out)


def _split_aux(out, has_aux, fn_name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{fn_name}(f, ...)(*args): output of function f should be a tuple: "
            "(output, aux) if has_aux is True"
        )
    return out


def _detach_tree(tree, keep_graph):
    leaves, rebuild = _flatten(tree)
    return rebuild(
        [
            leaf if keep_graph or not isinstance(leaf, ember.Tensor) else leaf.detach()
            for leaf in leaves
        ]
    )


def grad_and_value(func, argnums=0, has_aux=False):
    """``grad_and_value(f)(*args)`` -> (gradient of f w.r.t. args[argnums], f(*args))."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        single, nums = _normalize_argnums(argnums, len(args), "grad_and_value")
        level = _batched.current_level()
        if level is not None and any(
            isinstance(x, _batched.BatchedTensor) and x._bl == level
            for x in _flatten(list(args))[0]
        ):
            return _grad_and_value_batched(func, args, kwargs, single, nums, has_aux, level)
        args = list(args)
        diff_leaves, rebuilds, outer = [], [], False
        for a in nums:
            leaves, rebuild = _flatten(args[a])
            outer = outer or any(_tracked(x) for x in leaves)
            wrapped = [_differentiable_input(x, "grad_and_value") for x in leaves]
            args[a] = rebuild(wrapped)
            diff_leaves.append(wrapped)
            rebuilds.append(rebuild)
        with ember.enable_grad():
            out = func(*args, **kwargs)
            value, aux = _split_aux(out, has_aux, "grad_and_value")
            if not isinstance(value, ember.Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a "
                    f"Tensor, got {type(value).__name__}"
                )
            if value.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                    f"Tensor, got tensor with {value.dim()} dims. Maybe you wanted "
                    "to use the vjp or jacrev APIs instead?"
                )
            flat = [x for group in diff_leaves for x in group]
            grads = ember.autograd.grad(value, flat, create_graph=outer, allow_unused=True)
        grads = [ember.zeros_like(x) if g is None else g for g, x in zip(grads, flat)]
        out_groups, i = [], 0
        for group, rebuild in zip(diff_leaves, rebuilds):
            out_groups.append(rebuild(grads[i : i + len(group)]))
            i += len(group)
        g = out_groups[0] if single else tuple(out_groups)
        value = value if outer else value.detach()
        if has_aux:
            return g, (value, _detach_tree(aux, outer))
        return g, value

    return wrapper


def _grad_and_value_batched(func, args, kwargs, single, nums, has_aux, level):
    """grad inside vmap: each sample's gradient. A differentiated argument that is not batched
    is expanded over the batch (a stride-0 leaf), so that every sample gets its own gradient
    while the forward still shares the value (see _rules._ExpandedLinear)."""
    size, _ = _batched.level_info(level)
    args = list(args)
    leaves_by_arg, rebuilds, phys = [], [], []
    for a in nums:
        leaves, rebuild = _flatten(args[a])
        wrapped = []
        for x in leaves:
            v = _batched.unwrap(x, level)
            if v is not None:
                leaf = v.detach().requires_grad_()
            else:
                leaf = x.detach().unsqueeze(0).expand((size,) + tuple(x.shape)).requires_grad_()
            phys.append(leaf)
            wrapped.append(_batched.wrap(leaf, level))
        args[a] = rebuild(wrapped)
        leaves_by_arg.append(wrapped)
        rebuilds.append(rebuild)
    with ember.enable_grad():
        out = func(*args, **kwargs)
        value, aux = _split_aux(out, has_aux, "grad_and_value")
        if value.dim() != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                f"Tensor, got tensor with {value.dim()} dims. Maybe you wanted "
                "to use the vjp or jacrev APIs instead?"
            )
        v = _batched.unwrap(value, level)
        if v is None:  # the value does not depend on the batch
            v = value.unsqueeze(0).expand(size)
        grads = ember.autograd.grad(v.sum(), phys, allow_unused=True)
    grads = [
        _batched.wrap(ember.zeros_like(p) if g is None else g, level) for g, p in zip(grads, phys)
    ]
    out_groups, i = [], 0
    for group, rebuild in zip(leaves_by_arg, rebuilds):
        out_groups.append(rebuild(grads[i : i + len(group)]))
        i += len(group)
    g = out_groups[0] if single else tuple(out_groups)
    value = _batched.wrap(v.detach(), level)
    if has_aux:
        return g, (value, _detach_tree(aux, False))
    return g, value


def grad(func, argnums=0, has_aux=False):
    """``grad(f)(*args)``: the gradient of the scalar f with respect to args[argnums]."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the gradients of every primal."""
    leaves, rebuild = _flatten(primals)
    outer = any(_tracked(x) for x in leaves)
    wrapped = [_differentiable_input(x, "vjp") for x in leaves]
    with ember.enable_grad():
        out = func(*rebuild(wrapped))
    out, aux = _split_aux(out, has_aux, "vjp")
    out_leaves, out_rebuild = _flatten(out)
    for o in out_leaves:
        if not isinstance(o, ember.Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to return Tensors, got {type(o)}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, _ = _flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree "
                f"structure of outputs to the function: {len(ct_leaves)} "
                f"cotangents for {len(out_leaves)} outputs"
            )
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: cotangent has shape {tuple(c.shape)} and "
                    f"output has shape {tuple(o.shape)}"
                )
        cg = outer or any(_tracked(c) for c in ct_leaves) if create_graph is None else create_graph
        pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
        if not pairs:
            grads = [None] * len(wrapped)
        else:
            grads = ember.autograd.grad(
                [p[0] for p in pairs],
                wrapped,
                [p[1] for p in pairs],
                retain_graph=retain_graph,
                create_graph=cg,
                allow_unused=True,
            )
        grads = [ember.zeros_like(x) if g is None else g for g, x in zip(grads, wrapped)]
        return rebuild(grads)

    out_value = out_rebuild([o if outer else o.detach() for o in out_leaves])
    if has_aux:
        return out_value, vjp_fn, _detach_tree(aux, outer)
    return out_value, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents) by forward-mode AD."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    p_leaves, p_rebuild = _flatten(tuple(primals))
    t_leaves, _ = _flatten(tuple(tangents))
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the "
            "same python structure"
        )
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected primals and tangents to have "
                f"the same shape, got {tuple(p.shape)} and {tuple(t.shape)}"
            )
    with _fwad.dual_level():
        duals = [_fwad.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        out = func(*p_rebuild(duals))
        out, aux = _split_aux(out, has_aux, "jvp")
        o_leaves, o_rebuild = _flatten(out)
        prim, tan = [], []
        for o in o_leaves:
            if not isinstance(o, ember.Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): Expected f to return Tensors, got "
                    f"{type(o).__name__}"
                )
            p, t = _fwad.unpack_dual(o)
            prim.append(p)
            tan.append(ember.zeros_like(p) if t is None else t)
    if has_aux:
        return o_rebuild(prim), o_rebuild(tan), aux
    return o_rebuild(prim), o_rebuild(tan)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the JVP at the primals."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return _detach_tree(out, False), jvp_fn


def _jac_assemble(columns_or_rows, out_shape, in_shape, by_rows):
    """Stacks the pieces into a tensor of shape out_shape + in_shape."""
    stacked = ember.stack(columns_or_rows) if columns_or_rows else None
    if stacked is None:
        return ember.zeros(tuple(out_shape) + tuple(in_shape))
    if by_rows:  # rows: [out_numel, *in_shape]
        return stacked.reshape(tuple(out_shape) + tuple(in_shape))
    # columns: [in_numel, *out_shape] -> out_shape + in_shape
    n_out = len(out_shape)
    perm = list(range(1, n_out + 1)) + [0]
    return stacked.permute(perm).reshape(tuple(out_shape) + tuple(in_shape))


def _vectorizable(in_leaves, has_aux):
    """Whether jacrev/jacfwd may run as one vmap over the basis: plain inputs (not inside
    another transform, whose tangents or graph the batch would have to carry) and no aux."""
    return (
        not has_aux
        and _batched.current_level() is None
        and all(isinstance(x, ember.Tensor) and not _tracked(x) for x in in_leaves)
    )


def _basis(total, dtype):
    return ember.eye(total, dtype=dtype)


def _split_columns(basis, leaves):
    """The identity's columns for each leaf: [total, n_leaf] blocks."""
    out, start = [], 0
    for x in leaves:
        n = x.numel()
        out.append(basis.narrow(1, start, n))
        start += n
    return out


def _jacrev_vectorized(f, inputs, single, chunk_size):
    """Every row of the Jacobian in one batched backward: vmap over the output basis of a
    vjp whose forward also runs batched (the inputs expanded over the basis)."""
    in_leaves, in_rebuild = _flatten(tuple(inputs))
    out = f(*[x.detach() for x in inputs])
    o_leaves, o_rebuild = _flatten(out)
    total = sum(o.numel() for o in o_leaves)
    dtype = o_leaves[0].dtype
    basis = _basis(total, dtype)
    cts = [
        b.reshape((total,) + tuple(o.shape))
        for b, o in zip(_split_columns(basis, o_leaves), o_leaves)
    ]

    def one_row(*xs_and_cts):
        xs, ct = xs_and_cts[: len(in_leaves)], xs_and_cts[len(in_leaves) :]
        _, fn = vjp(lambda *d: f(*in_rebuild(list(d))), *xs)
        return tuple(_flatten(fn(o_rebuild(list(ct))))[0])

    expanded = [x.detach().unsqueeze(0).expand((total,) + tuple(x.shape)) for x in in_leaves]
    rows = vmap(one_row, chunk_size=chunk_size)(*expanded, *cts)
    per_output = []
    for k, o in enumerate(o_leaves):
        start = sum(p.numel() for p in o_leaves[:k])
        per_input = [
            r.narrow(0, start, o.numel()).reshape(tuple(o.shape) + tuple(x.shape))
            for r, x in zip(rows, in_leaves)
        ]
        structured = in_rebuild(per_input)
        per_output.append(structured[0] if single else structured)
    return o_rebuild(_detach_tree(per_output, False))


def _jacfwd_vectorized(f, inputs, single, randomness):
    """Every column of the Jacobian in one batched forward-mode pass: vmap over the input
    basis of a jvp."""
    in_leaves, in_rebuild = _flatten(tuple(inputs))
    total = sum(x.numel() for x in in_leaves)
    dtype = in_leaves[0].dtype
    basis = _basis(total, dtype)
    tangents = [
        b.reshape((total,) + tuple(x.shape))
        for b, x in zip(_split_columns(basis, in_leaves), in_leaves)
    ]

    def one_column(*ts):
        _, t = jvp(lambda *d: f(*in_rebuild(list(d))), tuple(in_leaves), tuple(ts))
        return t

    cols = vmap(one_column, randomness=randomness)(*tangents)  # [total, *out]
    c_leaves, c_rebuild = _flatten(cols)
    per_output = []
    for c in c_leaves:
        out_shape = tuple(c.shape[1:])
        n_out = len(out_shape)
        perm = list(range(1, n_out + 1)) + [0]
        moved = c.permute(perm) if n_out else c
        blocks = []
        start = 0
        for x in in_leaves:
            n = x.numel()
            blocks.append(moved.narrow(-1, start, n).reshape(out_shape + tuple(x.shape)))
            start += n
        structured = in_rebuild(blocks)
        per_output.append(structured[0] if single else structured)
    return c_rebuild(_detach_tree(per_output, False))


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func w.r.t. args[argnums] by reverse mode: shape out.shape + in.shape."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        single, nums = _normalize_argnums(argnums, len(args), "jacrev")

        def f_of_diff(*diff):
            call = list(args)
            for a, d in zip(nums, diff):
                call[a] = d
            return func(*call, **kwargs)

        in_leaves, in_rebuild = _flatten(tuple(args[a] for a in nums))
        if _vectorizable(in_leaves, has_aux):
            return _jacrev_vectorized(f_of_diff, [args[a] for a in nums], single, chunk_size)
        res = vjp(f_of_diff, *[args[a] for a in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        o_leaves, o_rebuild = _flatten(out)
        per_output = []
        for k, o in enumerate(o_leaves):
            rows = []
            for m in range(o.numel()):
                cts = [ember.zeros_like(x) for x in o_leaves]
                cts[k].view(-1)[m] = 1
                grads, _ = _flatten(vjp_fn(o_rebuild(cts)))
                rows.append(grads)
            per_input = []
            for j, x in enumerate(in_leaves):
                per_input.append(_jac_assemble([r[j] for r in rows], o.shape, x.shape, True))
            structured = in_rebuild(per_input)
            per_output.append(structured[0] if single else structured)
        jac = o_rebuild(per_output)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func w.r.t. args[argnums] by forward mode: shape out.shape + in.shape."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or "
            f"'same'. Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        single, nums = _normalize_argnums(argnums, len(args), "jacfwd")
        in_leaves, in_rebuild = _flatten(tuple(args[a] for a in nums))

        if _vectorizable(in_leaves, has_aux):

            def f_only(*diff):
                call = list(args)
                for a, d in zip(nums, diff):
                    call[a] = d
                return func(*call, **kwargs)

            return _jacfwd_vectorized(f_only, [args[a] for a in nums], single, randomness)

        def f_of_diff(*diff):
            call = list(args)
            for a, d in zip(nums, diff):
                call[a] = d
            return func(*call, **kwargs)

        columns = [[] for _ in in_leaves]  # [input][element] -> output leaves
        out = aux = None
        for j, x in enumerate(in_leaves):
            for m in range(x.numel()):
                tangents = [ember.zeros_like(y) for y in in_leaves]
                tangents[j].view(-1)[m] = 1
                res = jvp(f_of_diff, in_rebuild(in_leaves), in_rebuild(tangents), has_aux=has_aux)
                out = res[0]
                if has_aux:
                    aux = res[2]
                columns[j].append(_flatten(res[1])[0])
        if out is None:  # no input elements: evaluate once for the shapes
            out = f_of_diff(*in_rebuild(in_leaves))
            if has_aux:
                out, aux = out
        o_leaves, o_rebuild = _flatten(out)
        per_output = []
        for k, o in enumerate(o_leaves):
            per_input = [
                _jac_assemble([col[k] for col in columns[j]], o.shape, x.shape, False)
                for j, x in enumerate(in_leaves)
            ]
            structured = in_rebuild(per_input)
            per_output.append(structured[0] if single else structured)
        if not any(_tracked(x) for x in in_leaves):  # nothing outside differentiates the result
            jac = _detach_tree(per_output, False)
            jac = o_rebuild(jac)
        else:
            jac = o_rebuild(per_output)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of the scalar func w.r.t. args[argnums]: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)
