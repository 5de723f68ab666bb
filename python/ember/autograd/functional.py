"""Higher-level autograd functions (``torch.autograd.functional``): jacobian, hessian, vjp,
jvp, hvp, vhp, built on ``autograd.grad`` (jvp and hvp use the double-vjp trick)."""

from __future__ import annotations

import ember
from ember._C import _forward_ad as _fw
from ember.autograd import forward_ad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, name="inputs"):
    if isinstance(x, tuple):
        out, was_tuple = x, True
    elif isinstance(x, list):
        out, was_tuple = tuple(x), True
    else:
        out, was_tuple = (x,), False
    for i, t in enumerate(out):
        if not isinstance(t, ember.Tensor):
            raise TypeError(
                f"The {name} given to the function must be either a Tensor or a tuple of "
                f"Tensors but the value at index {i} has type {type(t)}."
            )
    return was_tuple, out


def _grad_preprocess(inputs, create_graph):
    """Inputs to differentiate with respect to: fresh leaves, or (create_graph) differentiable
    aliases of inputs that already require grad, so the result stays connected to them. A dual
    input keeps its tangents (forward over reverse, as hessian's forward-mode outer Jacobian)."""
    if create_graph:
        return tuple(
            x.view_as(x) if x.requires_grad else _fresh_leaf(x) for x in inputs
        )
    return tuple(_fresh_leaf(x) for x in inputs)


def _fresh_leaf(x):
    leaf = x.detach().requires_grad_()
    if not _fw.has_tangent(x):
        return leaf
    for level in list(forward_ad._levels):
        tangent = forward_ad.unpack_dual(x, level=level).tangent
        if tangent is not None:
            leaf = forward_ad.make_dual(leaf, tangent, level=level)
    return leaf


def _grad_postprocess(outputs, create_graph):
    if create_graph:
        return outputs
    return tuple(None if o is None else o.detach() for o in outputs)


def _fill_none(grads, refs, strict, what):
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. "
                    f"This is not allowed in strict mode{what}."
                )
            g = ember.zeros_like(r)
        out.append(g)
    return tuple(out)


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    diff = [(i, o) for i, o in enumerate(outputs) if o.requires_grad]
    if not diff:
        return (None,) * len(inputs)
    outs = [o for _, o in diff]
    gos = None if grad_outputs is None else [grad_outputs[i] for i, _ in diff]
    return ember.autograd.grad(outs, inputs, gos, create_graph=create_graph,
                               retain_graph=retain_graph, allow_unused=True)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    with ember.enable_grad():
        is_tuple, inputs = _as_tuple(inputs)
        inputs = _grad_preprocess(inputs, create_graph)
        out = func(*inputs)
        out_tuple, outputs = _as_tuple(out, "outputs of the user-provided function")
        if v is not None:
            _, v = _as_tuple(v, "v")
            if len(v) != len(outputs):
                raise RuntimeError(
                    f"v is a tuple of invalid length: should be {len(outputs)} but got {len(v)}."
                )
            for vi, o in zip(v, outputs):
                if tuple(vi.shape) != tuple(o.shape):
                    raise RuntimeError(
                        "Mismatch in shape: v has a shape of "
                        f"{ember.Size(vi.shape)} and output has a shape of {ember.Size(o.shape)}."
                    )
        else:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element."
                )
            v = (ember.ones_like(outputs[0]),)
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        grads = _fill_none(grads, inputs, strict, "")
    outputs = _grad_postprocess(outputs, create_graph)
    grads = _grad_postprocess(grads, create_graph)
    return (outputs if out_tuple else outputs[0]), (grads if is_tuple else grads[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), via the double-vjp trick."""
    with ember.enable_grad():
        is_tuple, inputs = _as_tuple(inputs)
        inputs = _grad_preprocess(inputs, create_graph)
        if v is not None:
            _, v = _as_tuple(v, "v")
            if len(v) != len(inputs):
                raise RuntimeError(
                    f"v is a tuple of invalid length: should be {len(inputs)} but got {len(v)}."
                )
            for vi, i in zip(v, inputs):
                if tuple(vi.shape) != tuple(i.shape):
                    raise RuntimeError(
                        "Mismatch in shape: v has a shape of "
                        f"{ember.Size(vi.shape)} and input has a shape of {ember.Size(i.shape)}."
                    )
        else:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function "
                    "is a single Tensor with a single element."
                )
            v = (ember.ones_like(inputs[0]),)
        out = func(*inputs)
        out_tuple, outputs = _as_tuple(out, "outputs of the user-provided function")
        dummies = tuple(ember.zeros_like(o).requires_grad_() for o in outputs)
        g = _autograd_grad(outputs, inputs, dummies, create_graph=True)
        g = tuple(ember.zeros_like(i) if gi is None else gi for gi, i in zip(g, inputs))
        jv = _autograd_grad(g, dummies, v, create_graph=create_graph)
        jv = _fill_none(jv, outputs, strict, "")
    outputs = _grad_postprocess(outputs, create_graph)
    jv = _grad_postprocess(jv, create_graph)
    return (outputs if out_tuple else outputs[0]), (jv if out_tuple else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func / d inputs: for outputs o_i and inputs x_j, entry [i][j] has shape
    o_i.shape + x_j.shape (tuples collapse where func/inputs were single tensors)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    if strict and vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`."
        )
    if vectorize and not create_graph:
        from ember import func as _func

        return _vectorized_jacobian(func, inputs, _func.jacrev)
    # One vjp per output element (also create_graph=True with vectorize, so that the result
    # keeps its graph to the inputs).
    with ember.enable_grad():
        is_tuple, inputs = _as_tuple(inputs)
        inputs = _grad_preprocess(inputs, create_graph)
        out = func(*inputs)
        out_tuple, outputs = _as_tuple(out, "outputs of the user-provided function")
        jac = []
        for i, o in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                g = _autograd_grad((flat[k],), inputs, None, create_graph=create_graph,
                                   retain_graph=True)
                for j, (gj, x) in enumerate(zip(g, inputs)):
                    if gj is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode."
                            )
                        gj = ember.zeros_like(x)
                    rows[j].append(gj)
            per_input = []
            for j, x in enumerate(inputs):
                if rows[j]:
                    stacked = ember.stack(rows[j])
                else:
                    stacked = ember.zeros((0,) + tuple(x.shape), dtype=x.dtype)
                per_input.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
            jac.append(tuple(_grad_postprocess(tuple(per_input), create_graph)))
    if out_tuple:
        return tuple(j if is_tuple else j[0] for j in jac)
    return jac[0] if is_tuple else jac[0][0]


def _plain_inputs(inputs):
    """Inputs that no outer transform differentiates: the vmap-based ember.func paths apply."""
    _, tup = _as_tuple(inputs)
    return not any(x.requires_grad or _fw.has_tangent(x) for x in tup)


def _vectorized_jacobian(func, inputs, transform):
    """vectorize=True: ember.func.jacrev / jacfwd, one vmap over the basis (as PyTorch batches
    its vjps / jvps), in autograd.functional's nesting: [output][input], each block of shape
    output.shape + input.shape."""
    is_tuple, tup = _as_tuple(inputs)
    tup = tuple(x.detach() for x in tup)
    out_is_tuple = []

    def as_outputs(*xs):
        out = func(*xs)
        is_t, outs = _as_tuple(out, "outputs of the user-provided function")
        out_is_tuple.append(is_t)
        return outs

    jac = transform(as_outputs, argnums=tuple(range(len(tup))))(*tup)
    if out_is_tuple[-1]:
        return tuple(j if is_tuple else j[0] for j in jac)
    return jac[0] if is_tuple else jac[0][0]


def _jacfwd(func, inputs, strict, vectorize):
    """jacobian(strategy="forward-mode"): one dual evaluation of func per input element, the
    tangent a basis vector of that input (every op carries its explicit JVP formula: one
    pass per column instead of one backward per row)."""
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True`."
        )
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    if _plain_inputs(inputs):
        from ember import func as _func

        return _vectorized_jacobian(func, inputs, _func.jacfwd)
    is_tuple, inputs = _as_tuple(inputs)
    columns = [[] for _ in inputs]  # columns[j][k]: the output tangents for element k of x_j
    outputs, out_tuple = None, False
    with forward_ad.dual_level():
        for j, x in enumerate(inputs):
            for k in range(x.numel()):
                basis = ember.zeros(x.numel(), dtype=x.dtype)
                basis[k] = 1
                duals = tuple(
                    forward_ad.make_dual(xi, basis.reshape(x.shape)) if i == j else xi
                    for i, xi in enumerate(inputs)
                )
                out_tuple, outs = _as_tuple(func(*duals), "outputs of the user-provided function")
                unpacked = [forward_ad.unpack_dual(o) for o in outs]
                if outputs is None:
                    outputs = tuple(u.primal for u in unpacked)
                columns[j].append([u.tangent for u in unpacked])
        if outputs is None:  # no input element: evaluate once for the output shapes
            out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function")
    jac = []
    for i, o in enumerate(outputs):
        per_input = []
        for j, x in enumerate(inputs):
            cols = [c[i] if c[i] is not None else ember.zeros_like(o) for c in columns[j]]
            if cols:
                stacked = ember.stack([c.reshape(-1) for c in cols], dim=1)
            else:
                stacked = ember.zeros((o.numel(), 0), dtype=o.dtype)
            per_input.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
        jac.append(tuple(per_input))
    if out_tuple:
        return tuple(j if is_tuple else j[0] for j in jac)
    return jac[0] if is_tuple else jac[0][0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Second derivatives of a scalar function. ``outer_jacobian_strategy="forward-mode"``
    (with ``vectorize=True``) takes the outer Jacobian by forward AD over the reverse-mode
    gradient."""
    if outer_jacobian_strategy not in ("reverse-mode", "forward-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True`."
        )
    is_tuple, inputs_t = _as_tuple(inputs)

    def jac_func(*inp):
        j = jacobian(func, inp, create_graph=True, strict=strict)
        return j if isinstance(j, tuple) else (j,)

    def check_scalar(*inp):
        out = func(*inp)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError(
                "The function given to hessian should return a single Tensor with a single "
                "element."
            )
        return out

    check_scalar(*inputs_t)
    res = jacobian(jac_func, inputs_t, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    if not is_tuple:
        return res[0][0] if isinstance(res[0], tuple) else res[0]
    return res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func."""
    with ember.enable_grad():
        is_tuple, inputs = _as_tuple(inputs)
        inputs = _grad_preprocess(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function "
                    "is a single Tensor with a single element."
                )
            v = (ember.ones_like(inputs[0]),)
        else:
            _, v = _as_tuple(v, "v")
        out = func(*inputs)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError(
                "The function given to vhp should return a single Tensor with a single element."
            )
        g = _autograd_grad((out,), inputs, None, create_graph=True)
        g = tuple(ember.zeros_like(i).requires_grad_() if gi is None else gi
                  for gi, i in zip(g, inputs))
        res = _autograd_grad(g, inputs, v, create_graph=create_graph)
        res = _fill_none(res, inputs, strict, "")
    out = _grad_postprocess((out,), create_graph)[0]
    res = _grad_postprocess(res, create_graph)
    return out, (res if is_tuple else res[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func (H is symmetric, so this equals vhp)."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)
